"""Tuning the stand-in as the papers tuned: the paper's grid, a validation split, seeds of its own.

``flcore tune --scale small [--paper P] [--plan]`` (the command line's ``tune``).  Each study of
:data:`STUDIES` tunes one method's hyper-parameters over the grid its paper searched (the
FedSAM paper's App. C.2: SAM rho in {0.01, 0.02, 0.05, 0.1, 0.2, 0.5}; ASAM rho in
{0.05, 0.1, 0.2, 0.5, 0.7, 1.0, 2.0} x eta in {0, 0.01, 0.1, 0.2}; the server learning
rate in {0.001, 0.01, 0.1, 1}, here FedAvgM's; the FedGloSS paper's Table 13, CIFAR-10 CNN
column, for the baselines it tuned: FedProx's mu, FedDyn's alpha, FedSpeed's rho x alpha x
lambda, FedSMOO's rho x beta, and its own rho_s x rho x beta x T_s; the FedGF paper, whose App. C
table is missing, through the grids its official script sweeps: FedGF's rho x T_D, MoFedSAM's
rho x beta, FedGAMMA's, FedSMOO-without-regulariser's rho and SCAFFOLD's server learning rate;
a baseline both papers tuned keeps the FedGloSS paper's larger grid) once per heterogeneity row of
:func:`flcore.config.tuned.heterogeneity_row`, at the alpha named in :data:`ROW_ALPHAS`.

Every run of a study is the scale's protocol with :data:`VALIDATION` of the training set
held out (:mod:`flcore.data.holdout`) and evaluated instead of the test set, on the seeds
:data:`TUNING_SEEDS`, which no verdict run uses.  The criterion is the FedSAM paper's (its
results are "averaged over the last 100 rounds") on the validation split: the mean
validation accuracy over the protocol's last ``eval_last`` rounds, averaged over the
tuning seeds; the highest mean wins, the first point in grid order on a tie.

The record (:mod:`flcore.config.tuned`, one file per paper and scale) is committed; the
presets read it, so ``make main`` trains the verdict runs with the chosen values and never
reruns the sweep.
"""
from __future__ import annotations

import itertools
import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flcore.config import resolve_config
from flcore.config.scales import DEFAULT_DATASET
from flcore.config.tuned import forget_records, heterogeneity_row, record_path

#: The share of the training set held out as the validation split of every tuning run.
VALIDATION = 0.2
#: The seeds of the tuning runs: none is a verdict seed (the verdicts use 0..5).
TUNING_SEEDS = (1000, 1001)
#: The alpha each heterogeneity row is tuned at (the stand-in's alphas that row covers).
ROW_ALPHAS = {"pathological": 0.0, "heterogeneous": 0.5, "homogeneous": 100.0}
#: The scales a record is made for (the paper scale runs the papers' own values).
TUNABLE_SCALES = ("small",)
#: FedGloSS's warm-up lengths T_s (Table 13, CIFAR-10 CNN: 1000, 2000, 4000 of T = 10k rounds) as the
#: same shares of the small protocol's 300 rounds.
GLOSS_WARMUP_ROUNDS = (30, 60, 120)
#: Where the FedGF paper's grids come from: its App. C table is missing from the paper, so the
#: grids are those its official script sweeps (the selected values are not published).
FEDGF_CODE_GRID = "FedGF official code, tools/experiments/cifar.sh (the paper's App. C table is missing)"
#: How a grid point is chosen (module docstring), as the records and the pages say it.
CRITERION = ("the mean validation accuracy over the last eval_last rounds of the protocol (the FedSAM paper "
             "averages its results over the last 100 rounds), averaged over the tuning seeds; the highest wins, "
             "the first grid point on a tie")


@dataclass(frozen=True)
class Study:
    """One method's hyper-parameters tuned over its paper's grid."""

    paper: str
    name: str
    method: str
    grid: dict[str, tuple[float, ...]]
    source: str

    @property
    def fields(self) -> list[str]:
        return list(self.grid)

    def points(self) -> list[dict[str, float]]:
        """Every combination of the grid's values, in grid order."""
        return [dict(zip(self.grid, values)) for values in itertools.product(*self.grid.values())]


#: The studies, paper by paper: each one method's grid as its paper searched it.
STUDIES = (
    Study("fedsam", "sam", "fedsam", {"rho": (0.01, 0.02, 0.05, 0.1, 0.2, 0.5)},
          "FedSAM paper, App. C.2 (CIFAR grid)"),
    Study("fedsam", "asam", "fedasam",
          {"rho": (0.05, 0.1, 0.2, 0.5, 0.7, 1.0, 2.0), "eta": (0.0, 0.01, 0.1, 0.2)},
          "FedSAM paper, App. C.2 (CIFAR grid)"),
    Study("fedsam", "fedavgm", "fedavgm", {"server_lr": (0.001, 0.01, 0.1, 1.0)},
          "FedSAM paper, App. C.2 (server learning rate grid)"),
    Study("fedgloss", "fedprox", "fedprox", {"mu": (0.001, 0.01, 0.1)}, "FedGloSS paper, Table 13 (CIFAR-10 CNN)"),
    Study("fedgloss", "feddyn", "feddyn", {"feddyn_alpha": (0.001, 0.01, 0.1)},
          "FedGloSS paper, Table 13 (CIFAR-10 CNN)"),
    Study("fedgloss", "fedspeed", "fedspeed",
          {"rho": (0.05, 0.1, 0.15, 0.2), "fedspeed_alpha": (0.9, 0.95, 0.99),
           "fedspeed_lambda": (10.0, 100.0, 1000.0)},
          "FedGloSS paper, Table 13 (CIFAR-10 CNN)"),
    Study("fedgloss", "fedsmoo", "fedsmoo", {"rho": (0.05, 0.1, 0.15, 0.2), "smoo_beta": (5.0, 10.0, 100.0)},
          "FedGloSS paper, Table 13 (CIFAR-10 CNN)"),
    Study("fedgloss", "fedgloss", "fedgloss-sam",
          {"gloss_rho_server": (0.01, 0.1, 0.15), "rho": (0.05, 0.1, 0.15, 0.2), "gloss_beta": (5.0, 10.0, 100.0),
           "rho_warmup_rounds": GLOSS_WARMUP_ROUNDS},
          "FedGloSS paper, Table 13 (CIFAR-10 CNN); T_s in {1000, 2000, 4000} of its T = 10k rounds, "
          "kept as the same shares (0.1, 0.2, 0.4) of the 300 rounds here"),
    Study("fedgf", "fedgf", "fedgf", {"rho": (0.02, 0.05, 0.1), "fedgf_threshold": (0.2, 0.3)},
          FEDGF_CODE_GRID + "; T_D is the script's c_o"),
    Study("fedgf", "mofedsam", "mofedsam", {"rho": (0.02, 0.05, 0.1), "fedcm_alpha": (0.1, 0.7, 0.9)},
          FEDGF_CODE_GRID + "; MoFedSAM's beta is fedcm_alpha"),
    Study("fedgf", "fedgamma", "fedgamma", {"rho": (0.02, 0.05, 0.1)}, FEDGF_CODE_GRID),
    Study("fedgf", "fedsmoo-noreg", "fedsmoo-noreg", {"rho": (0.02, 0.05, 0.1)}, FEDGF_CODE_GRID),
    Study("fedgf", "scaffold", "scaffold", {"server_lr": (0.001, 0.01, 1.0)},
          FEDGF_CODE_GRID + " {0.001, 0.01}, with 1 (SCAFFOLD's own and the FedSAM paper's value) added"),
)


def papers_tuned() -> list[str]:
    return sorted({s.paper for s in STUDIES})


def studies_of(paper: str | None) -> list[Study]:
    return [s for s in STUDIES if paper is None or s.paper == paper]


def tuning_config(study: Study, point: dict[str, float], alpha: float, seed: int, scale: str,
                  rounds: int | None = None):
    """The run of one grid point, row and tuning seed."""
    values = {"scale": scale, "dataset": DEFAULT_DATASET[scale], "method": study.method, "alpha": alpha,
              "seed": seed, "validation": VALIDATION, **point}
    if rounds is not None:
        values["rounds"] = rounds
    return resolve_config(values)


def tuning_configs(studies: Sequence[Study], scale: str, rows: Sequence[str] | None = None,
                   seeds: Sequence[int] = TUNING_SEEDS, rounds: int | None = None) -> list:
    """Every run the studies need, study by study, row by row, point by point, seed by seed."""
    return [tuning_config(study, point, ROW_ALPHAS[row], seed, scale, rounds)
            for study in studies for row in (rows or ROW_ALPHAS) for point in study.points() for seed in seeds]


def score(summary: dict[str, Any]) -> float:
    """A tuning run's validation accuracy (percent) by :data:`CRITERION`; 0 for a run that
    diverged (its loss went non-finite), so a grid point that diverges on a tuning seed is
    chosen only where every point does."""
    if summary.get("status") == "diverged":
        return 0.0
    return round(100.0 * float(summary["mean_last_100"]), 4)


def choose(points: list[dict]) -> dict:
    """The point of the highest ``mean`` (the first on a tie)."""
    return max(points, key=lambda p: p["mean"])  # max keeps the first of equal keys


def study_rows(study: Study, summaries: dict[str, dict], scale: str, rows: Sequence[str] | None = None,
               seeds: Sequence[int] = TUNING_SEEDS, rounds: int | None = None) -> list[dict]:
    """The record's rows of ``study`` from its runs' summaries (run id -> summary)."""
    out = []
    for row in rows or ROW_ALPHAS:
        alpha = ROW_ALPHAS[row]
        points = []
        for point in study.points():
            runs = {seed: summaries[tuning_config(study, point, alpha, seed, scale, rounds).run_id()] for seed in seeds}
            accuracy = {str(seed): score(summary) for seed, summary in runs.items()}
            entry = {"values": point, "accuracy": accuracy, "mean": round(statistics.fmean(accuracy.values()), 4)}
            diverged = [seed for seed, summary in runs.items() if summary.get("status") == "diverged"]
            if diverged:
                entry["diverged"] = diverged
            points.append(entry)
        assert heterogeneity_row(alpha) == row
        out.append({"row": row, "alpha": alpha, "points": points, "choice": choose(points)["values"]})
    return out


def make_record(paper: str, scale: str, summaries: dict[str, dict], commit: str | None,
                command: str, rounds: int | None = None) -> dict:
    """The record of ``paper``'s studies (:mod:`flcore.config.tuned`'s format)."""
    return {
        "paper": paper, "scale": scale, "dataset": DEFAULT_DATASET[scale], "validation": VALIDATION,
        "seeds": list(TUNING_SEEDS), "criterion": CRITERION, "command": command, "commit": commit,
        "studies": [{"name": s.name, "method": s.method, "fields": s.fields,
                     "grid": {k: list(v) for k, v in s.grid.items()}, "source": s.source,
                     "rows": study_rows(s, summaries, scale, rounds=rounds)} for s in studies_of(paper)],
    }


def write_record(record: dict) -> Path:
    """Write ``record`` to its file (atomically: a reader sees the old record or the new)."""
    path = record_path(record["paper"], record["scale"])
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)
    forget_records()
    return path
