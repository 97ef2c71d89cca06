"""Accuracy of a stored run's model on corrupted test sets (FedSAM paper, Figs. 6 and 8).

:func:`corrupted_accuracy` loads a run (:func:`flcore.analysis.io.load_run`: the final
model; for an ``+swa`` run that is the SWA model, the one the paper evaluates) and
evaluates it on its data set's test images under every corruption and severity asked for:

- CIFAR-10 / CIFAR-100 runs: the published CIFAR-10-C / CIFAR-100-C files
  (:func:`flcore.data.cifar_c.load_cifar_c`, md5-verified) under the run's data root,
  normalised with the CIFAR statistics the run trained with;
- MNIST-1D (and the synthetic vectors): the test signals corrupted by flcore
  (:func:`flcore.data.corruptions_1d.corrupt`, seeded, the unit range fixed by the clean
  test set), the stand-in below the paper scale.

The corrupted 1-D test sets are made once per process and reused for every run on the same
data, recognised by the content of the clean test set (a figure evaluates many runs on the same sets).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import torch

from flcore.analysis.evaluation import DatasetEvaluator
from flcore.analysis.io import load_run
from flcore.data import normalize
from flcore.data.cifar_c import CORRUPTIONS as IMAGE_CORRUPTIONS
from flcore.data.cifar_c import SEVERITIES, load_cifar_c
from flcore.data.corruptions_1d import CORRUPTIONS as SIGNAL_CORRUPTIONS
from flcore.data.corruptions_1d import SignalStats, corrupt
from flcore.seeding import generator

__all__ = ["corrupted_accuracy", "corrupted_accuracy_of_runs", "corrupted_test_set", "default_corruptions"]

IMAGE_DATASETS = ("cifar10", "cifar100")
_signal_cache: dict[tuple, tuple[torch.Tensor, torch.Tensor]] = {}


def default_corruptions(dataset: str) -> tuple[str, ...]:
    """All corruptions available for ``dataset``: CIFAR-C's 19 or the 15 1-D ones."""
    if dataset in IMAGE_DATASETS:
        return IMAGE_CORRUPTIONS
    return tuple(SIGNAL_CORRUPTIONS)


def corrupted_test_set(dataset, corruption: str, severity: int, data_root: str | Path = "data", seed: int = 0,
                       checksums: Mapping[str, str] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Normalised inputs and labels of ``dataset``'s test set under ``corruption`` at
    ``severity`` (``dataset``: a loaded :class:`flcore.data.Dataset`)."""

    if dataset.name in IMAGE_DATASETS:

        x, y = load_cifar_c(dataset.name, corruption, severity, data_root, checksums=checksums)
        return normalize(x, dataset.mean, dataset.std), y

    content = hashlib.sha1(dataset.test_x.numpy().tobytes()).hexdigest()
    key = (dataset.name, content, corruption, severity, seed)
    if key not in _signal_cache:
        stats = SignalStats.of(dataset.test_x.numpy())
        x = corrupt(dataset.test_x, corruption, severity, seed=seed, stats=stats)
        _signal_cache[key] = (normalize(x, dataset.mean, dataset.std), dataset.test_y)
    return _signal_cache[key]


@contextlib.contextmanager
def _torch_threads(threads: int | None):
    """``torch``'s intra-op threads set to ``threads`` within the block (None: unchanged)."""
    if threads is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _check_severities(severities: Sequence[int]) -> None:

    bad = [s for s in severities if s not in SEVERITIES]
    if bad:
        raise ValueError(f"severities must be in 1, 2, 3, 4, 5, got {bad}")


def corrupted_accuracy(run_dir: str | Path, corruptions: Sequence[str] | None = None,
                       severities: Sequence[int] = (1, 2, 3, 4, 5), device: str = "cpu",
                       data_root: str | Path | None = None, seed: int = 0, clean: bool = True,
                       checksums: Mapping[str, str] | None = None, dataset=None,
                       threads: int | None = 1, samples: int | None = None) -> pd.DataFrame:
    """Top-1 accuracy and mean cross-entropy of a run's final model per corruption and
    severity: one row each (``corruption``, ``severity``, ``accuracy`` as a fraction,
    ``loss``, ``n``), plus a ``clean`` row at severity 0 when ``clean``.

    ``data_root`` overrides the run's data folder (where ``CIFAR-10-C/`` lies);
    ``checksums`` replaces the published md5s (files from
    :func:`flcore.data.cifar_c.write_fake_cifar_c`); ``seed`` seeds the 1-D corruptions;
    ``dataset``: an already loaded dataset to reuse.  ``samples``: evaluate on that many
    test examples only, the same random subset for the clean and every corrupted set (the
    subset convention of :func:`flcore.analysis.io.split_data`).  ``threads``: torch's CPU threads
    during the evaluation (restored after).  One by default: the small models evaluated
    here run far slower on two threads of a busy machine (measured: 0.45 s against
    4.6 ms for 200 MNIST-1D signals on two shared cores).
    """
    _check_severities(severities)
    with _torch_threads(threads):
        run = load_run(run_dir, device=device, data_root=None if data_root is None else str(data_root),
                       dataset=dataset)
        return _evaluate(run, corruptions, severities, data_root, seed, clean, checksums, samples)


def _evaluate(run, corruptions, severities, data_root, seed, clean, checksums, samples=None) -> pd.DataFrame:
    root = data_root if data_root is not None else run.config.data_root
    names = tuple(corruptions) if corruptions is not None else default_corruptions(run.dataset.name)
    allowed = default_corruptions(run.dataset.name)
    unknown = [c for c in names if c not in allowed]
    if unknown:
        raise ValueError(f"corruptions not available for {run.dataset.name}: {', '.join(unknown)}; "
                         f"allowed: {', '.join(allowed)}")
    rows = []
    keep = None
    if samples is not None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        n = run.dataset.test_y.numel()
        if samples < n:
            keep = torch.randperm(n, generator=generator(0, "analysis/subset"))[:samples].sort().values

    def evaluate(x, y, corruption, severity):
        if keep is not None and x.shape[0] == run.dataset.test_y.numel():
            x, y = x[keep], y[keep]
        evaluator = DatasetEvaluator(run.flat, x.to(run.w.device), y.to(run.w.device))
        loss, error = evaluator.evaluate(run.w)
        rows.append({"corruption": corruption, "severity": severity, "accuracy": 1.0 - float(error),
                     "loss": float(loss), "n": int(y.numel())})

    if clean:
        x, y = run.data("test", device="cpu")
        evaluate(x, y, "clean", 0)
    for corruption in names:
        for severity in severities:
            x, y = corrupted_test_set(run.dataset, corruption, severity, root, seed, checksums)
            evaluate(x, y, corruption, severity)
    return pd.DataFrame(rows)


def corrupted_accuracy_of_runs(runs: pd.DataFrame, corruptions: Sequence[str] | None = None,
                               severities: Sequence[int] = (1, 2, 3, 4, 5), device: str = "cpu",
                               data_root: str | Path | None = None, seed: int = 0,
                               checksums: Mapping[str, str] | None = None, threads: int | None = 1,
                               samples: int | None = None) -> pd.DataFrame:
    """:func:`corrupted_accuracy` of every finished run of ``runs`` (the frame of
    :func:`flcore.reproduction.runner.ensure_runs`), its label columns and ``run_id`` joined on; a run listed
    twice (two labels naming the same run) is evaluated once.  ``threads``, ``samples``: as there."""
    label_columns = [c for c in runs.columns if c not in _RESULT_COLUMNS] + ["run_id"]
    done: dict[str, pd.DataFrame] = {}
    datasets: dict[tuple, object] = {}
    parts = []
    _check_severities(severities)
    for row in runs[runs["status"] == "finished"].to_dict("records"):
        run_dir = row["run_dir"]
        if run_dir not in done:
            stored = json.loads((Path(run_dir) / "config.json").read_text())
            key = tuple(stored.get(k) for k in ("dataset", "num_samples", "seed", "data_root"))  # load_dataset's
            with _torch_threads(threads):
                run = load_run(run_dir, device=device, data_root=None if data_root is None else str(data_root),
                               dataset=datasets.get(key))
                datasets.setdefault(key, run.dataset)
                done[run_dir] = _evaluate(run, corruptions, severities, data_root, seed, True, checksums, samples)
        part = done[run_dir].copy()
        for column in label_columns:
            part[column] = row[column]
        parts.append(part)
    if not parts:
        return pd.DataFrame(columns=["corruption", "severity", "accuracy", "loss", "n"] + label_columns)
    return pd.concat(parts, ignore_index=True)


_RESULT_COLUMNS = {"method", "run_id", "status", "run_dir", "rounds_done", "mean_last_100", "final_accuracy",
                   "diverged_round", "wall_time_s", "error"}
