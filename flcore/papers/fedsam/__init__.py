"""Caldarola, Caputo, Ciccone, ECCV 2022: FedSAM, FedASAM and SWA.

The paper's data files are beside this package: ``paper.yaml``, ``inventory.yaml``,
``claims.yaml`` and ``published/`` (:mod:`flcore.reproduction.papers`).  Importing the
package registers the paper, then its modules register their artifacts, claims' metrics
and probes:

- :mod:`.runs`: the CNN-protocol runs (Table 2, Figs. 3, 9-11) and the claims' spread reference;
- :mod:`.results`: Tables 3-8 and 13-17, and the robustness and sensitivity figures (Figs. 6, 8-10);
- :mod:`.analysis`: the geometry artifacts (Table 1, Figs. 1, 2, 4, 5, 7, 12-16);
- :mod:`.config_tables`: the hyper-parameter tables (Tables 10-12);
- :mod:`.pages`: the book's page on the methods published since, on Table 2's protocol.
"""
from flcore.reproduction.papers import register_paper

register_paper("fedsam", "FedSAM / FedASAM / SWA", __path__[0])

from flcore.papers.fedsam import runs, results, analysis  # noqa: E402,F401,I001  (they register the artifacts)
from flcore.papers.fedsam import pages  # noqa: E402,F401,I001  (the "Since these papers" page, after the paper's own)
