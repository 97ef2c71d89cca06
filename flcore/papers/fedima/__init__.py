"""Zhou et al.: FedIMA (model averaging).

The paper's data files are beside this package: ``paper.yaml``, ``inventory.yaml``,
``claims.yaml`` and ``published/`` (:mod:`flcore.reproduction.papers`).  Importing the
package registers the paper, then its modules register their artifacts, claims' metrics
and probes:

- :mod:`.runs`: every table and figure's runs and the claims' metrics;
- :mod:`.analysis`: the decomposition and the planes of Figs. 1-4, 8-10;
- :mod:`.config_tables`: Tables IV-VII from the registries.
"""
from flcore.reproduction.papers import register_paper

register_paper("fedima", "FedIMA", __path__[0])

from flcore.papers.fedima import runs  # noqa: E402,F401,I001  (they register the artifacts)
