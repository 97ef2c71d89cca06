"""Hyper-parameters tuned on the stand-in's own validation data, read by the presets.

A paper tuned its methods' hyper-parameters on its data (the FedSAM paper's App. C.2 grids);
below the ``paper`` scale the runs train another data set, where the paper's CIFAR values
need not be the best.  ``flcore tune`` (:mod:`flcore.reproduction.tuning`) runs the paper's
grid on a validation split held out from the training set (:mod:`flcore.data.holdout`) on
tuning seeds that no verdict uses, and writes one record per paper and scale:
``flcore/config/tuning/<paper>-<scale>.json``.  The presets read the records' choices
(:func:`tuned_entries`), so every run of that scale and data set -- the book's, a user's
``flcore run`` -- starts from the tuned values unless it sets its own.

The records sit beside the presets that read them, not in the paper's package: the
configuration layer is below the papers', and a run's values must not depend on which
modules were imported.

A record (checked when read: a regular file of bounded size, JSON without repeated keys,
the fields below) holds ``paper``, ``scale``, ``dataset``, ``validation`` (the held-out
share), ``seeds``, ``criterion``, ``command``, ``commit`` and ``studies``: each study tunes
``fields`` of one ``method`` over ``grid`` (field -> values, every combination), says where
the grid comes from (``source``), and has one entry per heterogeneity row in ``rows``:
``row`` (:func:`heterogeneity_row`), the ``alpha`` it was tuned at, its ``points`` (each
grid point's ``values``, per-seed validation ``accuracy`` in percent, and their ``mean``;
``diverged``: the seeds whose run diverged, scored 0) and its ``choice``.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Any

from flcore.safe_io import read_regular_bytes, unique_json_keys


def tuning_dir() -> Path:
    """Where the records are: ``flcore/config/tuning/``."""
    return Path(__file__).resolve().parent / "tuning"
#: The largest record read.
MAX_RECORD_BYTES = 4_000_000
#: What each study tunes, by the parts a method is built of (:mod:`flcore.algorithms`): a
#: SAM client step (P1, and FedGF's P5) takes the ``sam`` study's rho, an ASAM step (P2) the
#: ``asam`` study's rho and eta; a study of one method by name (FedAvgM's server lr, the
#: FedGloSS paper's baselines) applies to that method, over the studies of its parts.
STUDY_PARTS = {"sam": ("P1", "P5"), "asam": ("P2",)}
STUDY_METHODS = {"fedavgm": ("fedavgm", "fedavgm+asam"), "fedprox": ("fedprox",), "feddyn": ("feddyn",),
                 "fedspeed": ("fedspeed",), "fedsmoo": ("fedsmoo",),
                 # Table 13 has one FedGloSS row: its ablations and NaiveFedGloSS run the same values
                 "fedgloss": ("fedgloss-sam", "fedgloss-sgd", "fedgloss-sam-noadmm", "fedgloss-sgd-noadmm",
                              "naivefedgloss"),
                 # the static-c ablation changes c only, so it shares FedGF's radius
                 "fedgf": ("fedgf", "fedgf-static-c"), "mofedsam": ("mofedsam",), "fedgamma": ("fedgamma",),
                 "fedsmoo-noreg": ("fedsmoo-noreg",), "scaffold": ("scaffold",)}
#: The keys every record has.
_RECORD_KEYS = ("paper", "scale", "dataset", "validation", "seeds", "criterion", "command", "commit", "studies")


class TuningRecordError(ValueError):
    """A tuning record that cannot be trusted (names the file and what is wrong)."""


def heterogeneity_row(alpha: float) -> str:
    """The row of a study a Dirichlet ``alpha`` takes its values from, as the FedSAM paper's
    Table 11 groups its settings: ``pathological`` (alpha 0: one class per client),
    ``heterogeneous`` (0 < alpha < 1), ``homogeneous`` (alpha >= 1)."""
    if alpha == 0:
        return "pathological"
    return "heterogeneous" if alpha < 1 else "homogeneous"


def record_path(paper: str, scale: str) -> Path:
    return tuning_dir() / f"{paper}-{scale}.json"


def _check(record: Any, where: str) -> dict:
    def bad(what: str) -> TuningRecordError:
        return TuningRecordError(f"{where}: {what}")

    if not isinstance(record, dict) or any(k not in record for k in _RECORD_KEYS):
        raise bad(f"expected an object with {', '.join(_RECORD_KEYS)}")
    if not isinstance(record["studies"], list) or not all(isinstance(s, dict) for s in record["studies"]):
        raise bad("studies must be a list of objects")
    for study in record["studies"]:
        for key, kind in (("name", str), ("method", str), ("fields", list), ("grid", dict), ("rows", list)):
            if not isinstance(study.get(key), kind):
                raise bad(f"a study's {key} must be a {kind.__name__}")
        for row in study["rows"]:
            choice = row.get("choice") if isinstance(row, dict) else None
            if not isinstance(choice, dict) or set(choice) != set(study["fields"]):
                raise bad(f"study {study['name']!r}: every row needs a choice of {', '.join(study['fields'])}")
            if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in choice.values()):
                raise bad(f"study {study['name']!r}: a choice must be finite numbers")
            if row.get("row") not in ("pathological", "heterogeneous", "homogeneous"):
                raise bad(f"study {study['name']!r}: unknown row {str(row.get('row'))[:40]!r}")
    return record


@functools.cache
def load_record(paper: str, scale: str) -> dict | None:
    """The record of ``paper`` at ``scale`` (module docstring), or None when there is none."""
    path = record_path(paper, scale)
    if not path.exists():
        return None
    try:
        data = read_regular_bytes(path, MAX_RECORD_BYTES)
        record = json.loads(data, object_pairs_hook=unique_json_keys)
    except (OSError, ValueError) as exc:
        raise TuningRecordError(f"{path}: {exc}") from None
    return _check(record, str(path))


@functools.cache
def records(scale: str, dataset: str) -> tuple[dict, ...]:
    """Every record for ``scale`` and ``dataset`` (read once a process: every resolved config asks)."""
    out = []
    for path in sorted(tuning_dir().glob(f"*-{scale}.json")):
        record = load_record(path.name[: -len(f"-{scale}.json")], scale)
        if record is not None and record["dataset"] == dataset:
            out.append(record)
    return tuple(out)


def forget_records() -> None:
    """Read the records again at the next call (after ``flcore tune`` wrote one)."""
    load_record.cache_clear()
    records.cache_clear()


def method_study(name: str) -> bool:
    """Whether study ``name`` tunes one method by name (it then wins over a study of its parts
    and over the values the presets hold for the method; :func:`flcore.config.presets.method_defaults`)."""
    return name in STUDY_METHODS


def study_for(name: str, parts: tuple[str, ...], method: str) -> bool:
    """Whether a method of ``parts`` (its base ``method``) takes study ``name``'s values."""
    if name in STUDY_PARTS:
        return any(tag in part for tag in STUDY_PARTS[name] for part in parts)
    return method in STUDY_METHODS.get(name, ())


def tuned_entries(scale: str, dataset: str, alpha: float) -> list[dict]:
    """``{"study", "method", "fields", "grid", "source", "row", "alpha", "choice", "path", "seeds",
    "criterion"}`` of every study row a run at ``scale``, ``dataset`` and ``alpha`` reads."""
    row_name = heterogeneity_row(alpha)
    out = []
    for record in records(scale, dataset):
        for study in record["studies"]:
            row = next((r for r in study["rows"] if r["row"] == row_name), None)
            if row is None:
                continue
            out.append({"study": study["name"], "method": study["method"], "fields": list(study["fields"]),
                        "grid": study["grid"], "source": study.get("source", ""), "row": row_name,
                        "alpha": row.get("alpha"), "choice": dict(row["choice"]),
                        "path": f"flcore/config/tuning/{record['paper']}-{scale}.json",
                        "seeds": list(record["seeds"]), "criterion": record["criterion"]})
    return out
