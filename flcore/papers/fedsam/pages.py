"""The book's page "Since these papers": the flat-minima methods published after the five
papers (:data:`flcore.algorithms.recipes_since.SINCE_METHODS`, read when the runs are asked
for, so a method added there appears here without a change) on the small protocol of
FedSAM's Table 2.

The protocol: Table 2's two most heterogeneous CIFAR-10 columns (alpha = 0 and 0.05),
5 clients per round, three seeds (:data:`~flcore.reproduction.claims.CLAIM_SEEDS` of the
``small`` scale; one at ``paper``), every method with its registry defaults.  FedAvg (E = 1)
and FedSAM are Table 2's own runs (:func:`flcore.papers.fedsam.runs.sam_main_run`: the same
configurations, so the same run ids -- the runs the claim *FedSAM improves on FedAvg*
already trains at those seeds); only the newer methods' runs are added.

Each newer method makes two comparisons per alpha, stated as the claims are and decided by
the same paired rule (:func:`flcore.reproduction.claims.evaluate`): it beats FedSAM, and it
beats FedAvg.  These are the page's questions, not claims of a paper: they are not in the
registry (``flcore claims`` does not list them) and print no published gap.
"""
from __future__ import annotations

from collections.abc import Sequence

from flcore.algorithms import get_method, recipes_since
from flcore.papers.fedsam.runs import PAPER, Algorithm, sam_main_run
from flcore.reproduction.artifacts import RunSpec, register_page
from flcore.reproduction.claims import CLAIM_SEEDS, Claim, Comparison, get_claim

ARTIFACT_ID = "since-these-papers"
#: Table 2's most heterogeneous CIFAR-10 columns.
ALPHAS = (0.0, 0.05)
CLIENTS_PER_ROUND = 5
#: The two baselines every newer method is paired against (Table 2's rows).
BASELINES = ("FedSAM", "FedAvg E=1")


def method_label(name: str) -> str:
    """The name a method's summary gives it (``"FedSWA"`` for ``fedswa``), else its registry name."""
    first = get_method(name).summary.split(" ", 1)[0].strip("(:,;")
    return first if first.lower() == name.lower() else name


def newer_algorithms() -> tuple[Algorithm, ...]:
    """Table 2 rows for the newer methods, in :data:`~flcore.algorithms.recipes_since.SINCE_METHODS` 's
    order (read now: a method added there is on the page)."""
    return tuple(Algorithm(method_label(name), name) for name in recipes_since.SINCE_METHODS)


def page_seeds(scale: str, seeds: Sequence[int] = (0,)) -> list[int]:
    return sorted(set(seeds) | set(CLAIM_SEEDS.get(scale, ())))


def since_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """The page's runs: the baselines' (Table 2's) and the newer methods', per alpha and seed."""
    rows = [*BASELINES, *newer_algorithms()]
    return [sam_main_run("CIFAR-10", row, alpha, CLIENTS_PER_ROUND, seed, scale)
            for row in rows for alpha in ALPHAS for seed in page_seeds(scale, seeds)]


def page_claims() -> list[Claim]:
    """The page's comparisons as claims (not registered): each newer method beats each
    baseline, at both alphas; the main setting and what they are about are Table 2's."""
    template = get_claim("fedsam-sam-improves-fedavg")
    out = []
    for algorithm in newer_algorithms():
        for baseline in BASELINES:
            comparisons = tuple(
                Comparison({"dataset": "CIFAR-10", "alpha": alpha, "algorithm": algorithm.label,
                            "clients_per_round": CLIENTS_PER_ROUND},
                           {"dataset": "CIFAR-10", "alpha": alpha, "algorithm": baseline,
                            "clients_per_round": CLIENTS_PER_ROUND}, None, None)
                for alpha in ALPHAS)
            short = baseline.split(" ", 1)[0]
            out.append(Claim(
                id=f"since-{algorithm.method}-beats-{short.lower()}", paper=PAPER,
                text=f"{algorithm.label} is more accurate than {baseline} at alpha = 0 and 0.05",
                quote="", artifacts=(ARTIFACT_ID,), source="Table 2's protocol, CIFAR-10, 5 clients per round",
                metric="accuracy", direction="higher", comparisons=comparisons,
                about={"dataset": "cifar10", "model": "cnn"}, main_setting=template.main_setting))
    return out


register_page(PAPER, ARTIFACT_ID,
              "Since these papers: newer flat-minima methods on the protocol of FedSAM's Table 2", since_runs,
              questions=page_claims)
