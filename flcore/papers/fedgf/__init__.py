"""Lee and Yoon, ICML 2024: FedGF.

The paper's data files are beside this package: ``paper.yaml``, ``inventory.yaml``,
``claims.yaml`` and ``published/`` (:mod:`flcore.reproduction.papers`).  Importing the
package registers the paper, then its modules register their artifacts, claims' metrics
and probes:

- :mod:`.runs`: every artifact's runs, Fig. 7's probes and the claims' metrics;
- :mod:`.analysis`: flatness (LPF, lambda_max, Delta_F), surfaces and transmissions of stored runs.
"""
from flcore.reproduction.papers import register_paper

register_paper("fedgf", "FedGF", __path__[0])

from flcore.papers.fedgf import runs  # noqa: E402,F401,I001  (they register the artifacts)
