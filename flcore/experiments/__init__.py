"""Paper presets, scales, published values and the artifact registry.

- :mod:`~flcore.experiments.presets`: the three scales and the papers' hyper-parameters as data;
- :mod:`~flcore.experiments.published`: the papers' published numbers (CSV files per artifact);
- :mod:`~flcore.experiments.artifacts`: artifact id -> the runs it reads (:mod:`.fedsam` registers
  the FedSAM paper's);
- :mod:`~flcore.experiments.runner`: get those runs from the run store, training the missing ones;
- :mod:`~flcore.experiments.planner`: deduplicate runs and plan them into groups trained as one
  batch (``plan_groups``), train one group (``train_group``);
- :mod:`~flcore.experiments.sweep`: a user's grid of runs (``flcore sweep``);
- :mod:`~flcore.experiments.budget`: the book's estimated training time from a calibrated cost model;
- :mod:`~flcore.experiments.per_client`: the global model's accuracy on each client's data;
- :mod:`~flcore.experiments.hyperparams`: the hyper-parameter tables rendered from the presets.
"""
from .presets import DEFAULT_DATASET, method_defaults, scale_defaults

__all__ = ["DEFAULT_DATASET", "method_defaults", "scale_defaults"]
