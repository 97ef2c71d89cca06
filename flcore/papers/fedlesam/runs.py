"""The FedLESAM paper's artifacts (Fan et al., ICML 2024) as data.

Configuration artifacts, none of which trains a model: Table 1 (the SAM-based methods'
base algorithm and target) and Table 7 (memory, communication, backpropagations) are
rendered from the method registry (:mod:`flcore.papers.fedlesam.method_costs`); Table 6 (data-set
statistics) from flcore's data loader (:mod:`flcore.papers.fedlesam.config_tables`); Figure 5
(the clients' label distributions) from flcore's partition functions
(:mod:`flcore.papers.fedlesam.config_tables`).

Result and analysis artifacts read run group ``lesam-cifar`` of the paper's ``inventory.yaml``: the
paper's CIFAR protocol (ResNet-18-GN, SGD lr 0.1, weight decay 1e-3, the client lr decayed
x0.998 per round -- x0.9995 for FedDyn, FedSMOO and FedLESAM-D --, gradients clipped at 10
as in its code, 800 rounds; CIFAR-10 batch 50 and 5 local epochs, CIFAR-100 batch 20 and 2)
for 12 methods on Dirichlet and pathological splits with 100 clients (10% per round) or
200 (5%).  The paper's Dirichlet coefficient ``a`` is a per-class concentration, flcore's
``alpha`` the total one: ``alpha = a * C`` (book/differences.md).  Its pathological split
with ``c`` classes per client maps to ``partition = "shards"`` with ``classes_per_client = c``.

Scales (design guide section 8):

- ``paper``: the full grid of Table 2 (2 data sets x 4 splits x 2 populations x 12 methods);
- ``small``: MNIST-1D stands in for both CIFAR data sets with the ``small`` protocol (100
  clients, 5 per round, 300 rounds) plus the FedLESAM protocol's lr decay, clipping and
  weight decay; one split (Dirichlet 0.1, the paper's main analysis setting), the 12
  methods, one seed.  Figure 6 (pathological, 3 classes) and the rho ablation of Figure 4
  run 80 rounds (labelled ``rounds``), and so do Figure 1's FedAvg runs;
- ``smoke``: the same on the tiny MNIST-1D federation.

Tables 5 and 9 (rounds, communication and compute time to 68% / 74% test accuracy) read
the Dirichlet 0.1 runs ("Table 5") and, at the paper scale, the Dirichlet 0.6 runs
("Table 9": the paper calls it "an additional case" without naming it; our choice).
Below the paper scale both cases are the same runs, and the targets are relative to
FedAvg (:func:`target_accuracy`).  Times are the seconds per training round each run
records in its status (:class:`flcore.sim.round_driver.RoundTiming`), so the ratios to FedAvg
are measured on the machine that trained the runs.  The runs of these settings are
*timed* (config ``timed``, :func:`timed_setting`): each trains alone, never in a batch
(whose runs record a share of a shared round), and a timing claim's repeats are their
seeds -- three timed runs per method at ``small`` (the claims' seeds), each trained again,
whose spread is the timing noise of the machine, not the rounds of one run.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flcore.analysis.recording import register_probe
from flcore.papers.fedlesam.analysis import perturbation_probe_factory
from flcore.reproduction.artifacts import RunSpec, no_runs, register_artifacts
from flcore.reproduction.stand_in import stand_in_for

PAPER = "fedlesam"
DATASETS = ("CIFAR-10", "CIFAR-100")
NUM_CLASSES = {"cifar10": 10, "cifar100": 100, "mnist1d": 10, "synthetic": 10}


@dataclass(frozen=True)
class Algorithm:
    """A row of Table 2: the paper's name, flcore's method, its client lr decay."""

    label: str
    method: str
    lr_decay: float = 0.998


#: Table 2's rows in the paper's order (FedDyn-type methods decay the lr by 0.9995, App. E).
ALGORITHMS = (
    Algorithm("FedAvg", "fedavg"), Algorithm("FedAdam", "fedadam"), Algorithm("SCAFFOLD", "scaffold"),
    Algorithm("FedCM", "fedcm"), Algorithm("FedDyn", "feddyn", 0.9995), Algorithm("FedSAM", "fedsam"),
    Algorithm("MoFedSAM", "mofedsam"), Algorithm("FedGAMMA", "fedgamma"), Algorithm("FedSMOO", "fedsmoo", 0.9995),
    Algorithm("FedLESAM", "fedlesam"), Algorithm("FedLESAM-D", "fedlesam-d", 0.9995),
    Algorithm("FedLESAM-S", "fedlesam-s"),
)
#: Methods published since the paper whose later claims (``by:`` in claims.yaml) are tested on
#: Table 2's runs: trained at :data:`LATER_CELL` only, with the table's protocol and their own
#: defaults, and left out of the paper's ranking (the notebook orders rows by :data:`ALGORITHMS`).
LATER_ALGORITHMS = (Algorithm("FedGMT", "fedgmt"),)
#: The setting of Table 2 the later claims name: (data set, split, population).
LATER_CELL = ("CIFAR-10", "Dir-0.1", "100 clients, 10%")
ALGORITHM = {a.label: a for a in ALGORITHMS + LATER_ALGORITHMS}
#: Table 4: each variant beside the method it is built on.
VARIANT_PAIRS = (("FedAvg", "FedLESAM"), ("SCAFFOLD", "FedLESAM-S"), ("FedDyn", "FedLESAM-D"))
#: Tables 5 and 9 (rounds / cost / time to a target) and Table 8 (seconds per round).
EFFICIENCY_ALGORITHMS = ("FedAvg", "FedSAM", "MoFedSAM", "FedGAMMA", "FedSMOO", "FedLESAM-S", "FedLESAM-D")
TABLE8_ALGORITHMS = ("FedAvg", "FedSAM", "MoFedSAM", "FedGAMMA", "FedSMOO", "FedLESAM", "FedLESAM-S", "FedLESAM-D")
FIG2_ALGORITHMS = ("FedAvg", "FedSAM", "MoFedSAM", "FedGAMMA", "FedSMOO", "FedLESAM")
FIG3_ALGORITHMS = ("FedAvg", "FedSAM", "FedGAMMA", "FedSMOO", "FedLESAM-D")
FIG6_ALGORITHMS = ("FedAvg", "FedSAM", "FedGAMMA", "MoFedSAM", "FedSMOO", "FedLESAM-D")
#: The targets of Tables 5 and 9 (test accuracy, %).
TARGETS = (68, 74)
#: The two settings of the efficiency tables (module docstring).
CASES = {"Table 5": "Dir-0.1", "Table 9": "Dir-0.6"}
#: The efficiency tables' runs are timed (:func:`timed_setting`): their splits and population.
TIMED_SPLITS = frozenset(CASES.values())
TIMED_POPULATION = "100 clients, 10%"

#: Splits: (partition, per-class Dirichlet coefficient or classes per client).  The paper's
#: second pathological coefficient is lost in our copy; 5 is the other value its code lists.
SPLITS = {"Dir-0.6": ("dirichlet", 0.6), "Dir-0.1": ("dirichlet", 0.1), "Path-3": ("shards", 3),
          "Path-5": ("shards", 5)}
#: Client populations: (clients, clients per round, images per client) at the paper scale.
POPULATIONS = {"100 clients, 10%": (100, 10, 500), "200 clients, 5%": (200, 10, 250)}
#: Figure 4's rho grid (the paper's is lost; a log grid around its rule rho ~ 0.1 lr).
RHO_GRID = (0.001, 0.01, 0.1, 1.0)
#: Figure 1: Dirichlet coefficients of its panels (b) and (c).
FIG1_SPLITS = ("Dir-0.6", "Dir-0.06")
#: Rounds of the shorter analysis runs below the paper scale (labelled ``rounds``).
SHORT_ROUNDS = {"smoke": 4, "small": 80}
FIG1_ROUNDS = {"smoke": 4, "small": 80}
#: Figure 2's probe interval (rounds): not every evaluated round (the last 100 are all
#: evaluated), which would cost a gradient on the pooled data each time.
PROBE_EVERY = {"smoke": 2, "small": 10, "paper": 10}


def dataset_for(label: str, scale: str) -> str:
    """flcore's data set for the paper's data set ``label`` at ``scale`` (:mod:`flcore.reproduction.stand_in`)."""
    return stand_in_for(scale, PAPER).dataset_for(label)


def datasets_for(scale: str) -> tuple[str, ...]:
    """Both CIFAR data sets at the paper scale; below it they would be the same runs."""
    return DATASETS if stand_in_for(scale, PAPER).is_paper else ("CIFAR-10",)


def splits_for(scale: str) -> tuple[str, ...]:
    return tuple(SPLITS) if stand_in_for(scale, PAPER).is_paper else ("Dir-0.1",)


def populations_for(scale: str) -> tuple[str, ...]:
    return tuple(POPULATIONS) if stand_in_for(scale, PAPER).is_paper else ("100 clients, 10%",)


def partition_config(split: str, dataset: str) -> dict:
    """Config values of a split: ``Dir-a`` -> Dirichlet ``alpha = a * C``; ``Path-c`` -> shards."""
    if split.startswith("Dir-"):
        per_class = float(split[4:])
        return {"partition": "dirichlet", "alpha": per_class * NUM_CLASSES[dataset]}
    if split.startswith("Path-"):
        return {"partition": "shards", "classes_per_client": int(split[5:])}
    raise ValueError(f"unknown split {split!r}; expected 'Dir-<a>' or 'Path-<c>'")


def protocol(dataset_label: str, population: str, scale: str) -> dict:
    """The FedLESAM protocol's config values (module docstring) for one data set and population."""
    values: dict[str, Any] = {"clip_norm": 10.0, "weight_decay": 1e-3}
    if not stand_in_for(scale, PAPER).is_paper:
        return values
    clients, per_round, samples = POPULATIONS[population]
    cifar10 = dataset_label == "CIFAR-10"
    values.update(model="resnet18gn", clients=clients, per_round=per_round, samples_per_client=samples,
                  rounds=800, local_epochs=5 if cifar10 else 2, batch_size=50 if cifar10 else 20, lr=0.1,
                  momentum=0.0, eval_every=10, eval_last=100, checkpoint_every=50)
    return values


def timed_setting(dataset_label: str, split: str, population: str, extra: dict) -> bool:
    """Whether a run is *timed* (config ``timed``: trained alone, so its round times are its
    own): the full-length runs of the efficiency tables' settings (CIFAR-10, 100 clients,
    :data:`TIMED_SPLITS`), whichever table asks for them, so Table 2's cell there is the
    timed run of Tables 5, 8 and 9."""
    return (dataset_label == "CIFAR-10" and population == TIMED_POPULATION and split in TIMED_SPLITS
            and not {"rounds", "probes", "snapshot_rounds"} & set(extra))


def lesam_run(dataset_label: str, algorithm: Algorithm | str, split: str, population: str, seed: int,
              scale: str, labels: dict | None = None, **extra: Any) -> RunSpec:
    """One run of the ``lesam-cifar`` group (``extra``: config overrides, e.g. ``rounds``)."""
    algorithm = ALGORITHM[algorithm] if isinstance(algorithm, str) else algorithm
    dataset = dataset_for(dataset_label, scale)
    config = {"method": algorithm.method, "dataset": dataset, "scale": scale, "seed": int(seed),
              "lr_decay": algorithm.lr_decay, **partition_config(split, dataset),
              **protocol(dataset_label, population, scale)}
    if timed_setting(dataset_label, split, population, extra):
        config["timed"] = True
    if algorithm.method == "fedadam" and stand_in_for(scale, PAPER).is_paper:
        config["server_lr"] = 0.1  # FL-Simulator's recommendation; the paper's value is lost
    config.update(extra)
    run_labels = {"dataset": dataset_label, "algorithm": algorithm.label, "split": split,
                  "population": population, "seed": int(seed), **(labels or {})}
    if "rounds" in extra:
        run_labels["rounds"] = int(extra["rounds"])
    return RunSpec(run_labels, config)


# --------------------------------------------------------------------------- run groups

def table2_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 2: every (data set, split, population, method, seed) cell of the scale, then the
    later methods' runs at :data:`LATER_CELL`."""
    dataset, split, population = LATER_CELL
    return ([lesam_run(ds, algo, split, pop, seed, scale)
             for ds in datasets_for(scale) for pop in populations_for(scale) for split in splits_for(scale)
             for algo in ALGORITHMS for seed in seeds]
            + [lesam_run(dataset, algo, split, population, seed, scale) for algo in LATER_ALGORITHMS for seed in seeds])


def table4_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 4: the variants and their bases over Table 2's settings (the CIFAR columns)."""
    wanted = {name for pair in VARIANT_PAIRS for name in pair}
    return [s for s in table2_runs(scale, seeds) if s.labels["algorithm"] in wanted]


def efficiency_runs(case: str, scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Tables 5 / 9: the methods at the case's setting, one spec per target (same run)."""
    split = CASES[case] if stand_in_for(scale, PAPER).is_paper else "Dir-0.1"
    return [lesam_run("CIFAR-10", algo, split, "100 clients, 10%", seed, scale,
                      labels={"case": case, "target": target})
            for target in TARGETS for algo in EFFICIENCY_ALGORITHMS for seed in seeds]


def table5_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    return efficiency_runs("Table 5", scale, seeds)


def table9_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    return efficiency_runs("Table 9", scale, seeds)


def table8_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Table 8: seconds per round of 8 methods at the Table 5 setting."""
    return [lesam_run("CIFAR-10", algo, "Dir-0.1", "100 clients, 10%", seed, scale)
            for algo in TABLE8_ALGORITHMS for seed in seeds]


def fig1_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Figure 1 (a)-(c): centralized SGD on the pooled data, FedAvg at Dirichlet 0.6 and 0.06."""
    dataset = dataset_for("CIFAR-10", scale)
    rounds = {} if stand_in_for(scale, PAPER).is_paper else {"rounds": FIG1_ROUNDS[scale]}
    specs = []
    for seed in seeds:
        central = {"method": "centralized-sgd", "dataset": dataset, "scale": scale, "seed": int(seed),
                   **protocol("CIFAR-10", "100 clients, 10%", scale)}
        for key in ("rounds", "per_round", "clients", "samples_per_client", "eval_every", "eval_last",
                    "checkpoint_every", "local_epochs"):
            central.pop(key, None)  # one client holding the pooled data; epochs from its preset
        specs.append(RunSpec({"dataset": "CIFAR-10", "algorithm": "Centralized", "split": "pooled",
                              "seed": int(seed)}, central))
        specs += [lesam_run("CIFAR-10", "FedAvg", split, "100 clients, 10%", seed, scale, **rounds)
                  for split in FIG1_SPLITS]
    return specs


def fig2_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Figure 2: the methods at CIFAR-10 Dirichlet 0.1 with the ``perturbation`` probe
    recorded every :data:`PROBE_EVERY` rounds, shorter below the paper scale, and Figure 1's
    centralized run (the reference of the sharpness panel)."""
    rounds = {} if stand_in_for(scale, PAPER).is_paper else {"rounds": SHORT_ROUNDS[scale]}
    probed = [lesam_run("CIFAR-10", algo, "Dir-0.1", "100 clients, 10%", seed, scale,
                        labels={"probe": "perturbation"}, probes=["perturbation"],
                        probe_every=PROBE_EVERY[scale], **rounds)
              for algo in FIG2_ALGORITHMS for seed in seeds]
    central = [s for s in fig1_runs(scale, seeds) if s.labels["algorithm"] == "Centralized"]
    return probed + central  # the centralized model: the sharpness panel's reference


def fig3_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Figure 3: final global models at CIFAR-10 Dirichlet 0.1 (the paper does not name
    the split; our choice, the setting of its Fig. 2)."""
    return [lesam_run("CIFAR-10", algo, "Dir-0.1", "100 clients, 10%", seed, scale)
            for algo in FIG3_ALGORITHMS for seed in seeds]


def fig4_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Figure 4: FedLESAM-S over :data:`RHO_GRID` and FedAvg, on the CIFAR panels
    (Dirichlet 0.1), shorter below the paper scale."""
    rounds = {} if stand_in_for(scale, PAPER).is_paper else {"rounds": SHORT_ROUNDS[scale]}
    specs = []
    for ds in datasets_for(scale):
        for seed in seeds:
            specs.append(lesam_run(ds, "FedAvg", "Dir-0.1", "100 clients, 10%", seed, scale, **rounds))
            specs += [lesam_run(ds, "FedLESAM-S", "Dir-0.1", "100 clients, 10%", seed, scale,
                                labels={"rho": rho}, rho=rho, **rounds) for rho in RHO_GRID]
    return specs


def fig6_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """Figure 6: final global models at CIFAR-10, pathological with 3 classes per client."""
    rounds = {} if stand_in_for(scale, PAPER).is_paper else {"rounds": SHORT_ROUNDS[scale]}
    return [lesam_run("CIFAR-10", algo, "Path-3", "100 clients, 10%", seed, scale, **rounds)
            for algo in FIG6_ALGORITHMS for seed in seeds]


register_probe("perturbation", perturbation_probe_factory)

register_artifacts(PAPER, {
    "fedlesam-table-1": no_runs,
    "fedlesam-table-2": table2_runs,
    "fedlesam-table-3": no_runs,
    "fedlesam-table-4": table4_runs,
    "fedlesam-table-5": table5_runs,
    "fedlesam-table-6": no_runs,
    "fedlesam-table-7": no_runs,
    "fedlesam-table-8": table8_runs,
    "fedlesam-table-9": table9_runs,
    "fedlesam-fig-1": fig1_runs,
    "fedlesam-fig-2": fig2_runs,
    "fedlesam-fig-3": fig3_runs,
    "fedlesam-fig-4": fig4_runs,
    "fedlesam-fig-5": no_runs,
    "fedlesam-fig-6": fig6_runs,
})
