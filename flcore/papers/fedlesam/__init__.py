"""Fan et al., ICML 2024: FedLESAM.

The paper's data files are beside this package: ``paper.yaml``, ``inventory.yaml``,
``claims.yaml`` and ``published/`` (:mod:`flcore.reproduction.papers`).  Importing the
package registers the paper, then its modules register their artifacts, claims' metrics
and probes:

- :mod:`.runs`: the 12-method run group and the probe;
- :mod:`.metrics`: the claims' metrics;
- :mod:`.results`: Tables 5 and 9 (rounds, communication and compute to a target);
- :mod:`.analysis`: the loss surfaces of Figs. 1, 3, 6 and Fig. 2's perturbation drift and sharpness;
- :mod:`.config_tables`: Table 6 and Fig. 5's partitions.
"""
from flcore.reproduction.papers import register_paper

register_paper("fedlesam", "FedLESAM", __path__[0])

from flcore.papers.fedlesam import runs  # noqa: E402,F401,I001  (they register the artifacts)
from flcore.papers.fedlesam import metrics  # noqa: E402,F401,I001  (the claims' metrics)
