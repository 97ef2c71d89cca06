"""Many runs as few computations: run requests, the planner that groups them, and sweeps.

- :mod:`.spec`: :class:`RunSpec`, one run request (labels + config values);
- :mod:`.planner`: deduplicate runs and plan them into groups trained as one batch
  (:func:`plan_groups`), train one group (:func:`train_group`) or many (:func:`train_groups`);
- :mod:`.sweep`: a user's grid of runs (``flcore sweep``).
"""
from flcore.planning.planner import RunGroup, default_workers, plan_groups, run_cost, train_group, train_groups
from flcore.planning.spec import RunSpec, registered_methods

__all__ = ["RunGroup", "RunSpec", "default_workers", "plan_groups", "registered_methods", "run_cost",
           "train_group", "train_groups"]
