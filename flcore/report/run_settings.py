"""What a page's runs are, read from the runs themselves: the data sets, models, rounds,
clients and seeds of their resolved configs.

A page's banner (:func:`flcore.report.page.scale_banner`) states these, so a page whose runs
train 75 or 3,000 rounds says so instead of the scale's default; where the runs differ, the
banner gives the range (``75-300 rounds``) or the list (``CIFAR-10 and CIFAR-100``).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: How the pages name flcore's models.
MODEL_LABELS = {"cnn": "the CIFAR CNN", "resnet18gn": "ResNet-18 (GroupNorm)", "fmnist_cnn": "the Fashion-MNIST CNN",
                "vgg11gn": "VGG-11 (GroupNorm)", "alexnet_gn": "AlexNet (GroupNorm)",
                "mnist1d_cnn": "the MNIST-1D CNN", "mnist1d_mlp": "the MNIST-1D MLP"}
#: Data sets flcore generates (no download): their size is a setting of the run.
GENERATED = frozenset({"mnist1d", "synthetic"})


@dataclass(frozen=True)
class RunSettings:
    """The distinct values of the settings a page's runs use (each sorted)."""

    runs: int
    datasets: tuple[str, ...]
    models: tuple[str, ...]
    rounds: tuple[int, ...]
    clients: tuple[int, ...]
    per_round: tuple[int, ...]
    num_samples: tuple[int, ...]  # of the generated data sets
    seeds: tuple[int, ...]
    seeds_per_cell: tuple[int, int]  # fewest and most seeds one configuration runs


def run_settings(specs: Iterable) -> RunSettings | None:
    """The settings of ``specs`` (:class:`~flcore.planning.spec.RunSpec`; pending ones left
    out), each run counted once; ``None`` when no run is left."""
    configs = {}
    for spec in specs:
        if spec.available:
            config = spec.resolve()
            configs.setdefault(config.run_id(), config.canonical())
    if not configs:
        return None
    values = list(configs.values())

    def distinct(key):
        return tuple(sorted({v[key] for v in values if v.get(key) is not None}))

    cells: dict[tuple, set] = {}
    for v in values:
        cells.setdefault(tuple(sorted((k, str(x)) for k, x in v.items() if k != "seed")), set()).add(v.get("seed"))
    per_cell = [len(s) for s in cells.values()]
    return RunSettings(
        runs=len(values), datasets=distinct("dataset"), models=distinct("model"), rounds=distinct("rounds"),
        clients=distinct("clients"), per_round=distinct("per_round"),
        num_samples=tuple(sorted({v["num_samples"] for v in values
                                  if v["dataset"] in GENERATED and v.get("num_samples") is not None})),
        seeds=distinct("seed"), seeds_per_cell=(min(per_cell), max(per_cell)))


def span(values: Sequence[int]) -> str:
    """``(300,)`` -> ``"300"``; ``(75, 300)`` -> ``"75-300"`` (thousands separated)."""
    if not values:
        return "\u2013"
    low, high = min(values), max(values)
    return f"{low:,}" if low == high else f"{low:,}-{high:,}"


def names(values: Sequence[str], labels: dict[str, str] | None = None) -> str:
    """``("cifar10", "cifar100")`` -> ``"CIFAR-10 and CIFAR-100"`` (``labels``: display names)."""
    shown = [(labels or {}).get(v, v) for v in values]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]


def seeds_text(settings: RunSettings) -> str:
    """``"seed 0"``, ``"seeds 0, 1, 2"`` or ``"seeds 0, 1, 2 (1 to 3 per configuration)"``."""
    listed = ", ".join(str(s) for s in settings.seeds)
    text = f"seed{'s' if len(settings.seeds) > 1 else ''} {listed}"
    low, high = settings.seeds_per_cell
    return text + (f" ({low} to {high} per configuration)" if low != high else "")


def protocol_text(settings: RunSettings) -> str:
    """``"100 clients, 5 per round, 75-300 rounds"``."""
    return f"{span(settings.clients)} clients, {span(settings.per_round)} per round, {span(settings.rounds)} rounds"


def models_text(settings: RunSettings) -> str:
    """``"the MNIST-1D CNN"``, ``"the CIFAR CNN and ResNet-18 (GroupNorm)"``."""
    return names(settings.models, MODEL_LABELS)
