"""Caldarola, Cagnasso, Caputo, Ciccone, 2024: FedGloSS.

The paper's data files are beside this package: ``paper.yaml``, ``inventory.yaml``,
``claims.yaml`` and ``published/`` (:mod:`flcore.reproduction.papers`).  Importing the
package registers the paper, then its modules register their artifacts, claims' metrics
and probes:

- :mod:`.runs`: the configuration and published-only artifacts;
- :mod:`.results`: Tables 3-7, 9, 10 and Figs. 3, 15-19;
- :mod:`.analysis`: the geometry figures and Table 1;
- :mod:`.config_tables`: Tables 2, 12 and 13 from the registries.
"""
from flcore.reproduction.papers import register_paper

register_paper("fedgloss", "FedGloSS", __path__[0])

from flcore.papers.fedgloss import runs, results, analysis  # noqa: E402,F401,I001  (they register the artifacts)
