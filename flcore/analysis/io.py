"""Load a stored run's model (as a flat vector) and its data for analysis.

A run directory (see :mod:`flcore.store.run`) holds ``config.json`` (the canonical
config), ``final_model.pt`` (the model's ``state_dict``, once finished) and
``checkpoint.pt`` (a dict whose ``"w"`` is the flat parameter vector of the latest
checkpoint).  :func:`load_run` rebuilds the config with
:func:`flcore.resolve_config`, loads the dataset the run used, builds the model
exactly as the engine does (``flcore.sim.engine.build_initial_model``: ``build_model``
under ``torch.manual_seed(derive_seed(seed, "init"))`` in a forked RNG; the seed does not
matter once the stored weights are loaded, but keeps the template identical), loads the
stored weights with ``load_state_dict(strict=True)`` and flattens them.

This module imports ``models``, ``data``, ``store`` and ``config`` only: ``analysis``
does not depend on ``sim`` (docs/design.md section 2).  The data helpers mirror
``flcore.sim.federated_data.build_federated_data``: same loader arguments, same
partition call, inputs normalised with the dataset's statistics and *not* augmented.

Decision: ``samples=N`` analyses a random subset of ``N`` examples of the split, drawn
without replacement from the generator ``(seed, "analysis/subset")`` and kept in dataset
order, so the subset is the same for every tool and every run with the same data.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from flcore.config import resolve_config
from flcore.data import DatasetError, hold_out_validation, load_dataset, normalize
from flcore.devices import resolve_device
from flcore.errors import ConfigError, quote
from flcore.flat import FlatModel
from flcore.models import build_model
from flcore.seeding import derive_seed, generator
from flcore.sim.federated_data import client_partition
from flcore.store import Run

__all__ = [
    "LoadedRun",
    "RunLoadError",
    "build_template",
    "client_indices",
    "load_run",
    "load_run_weights",
    "resolve_device",
    "split_data",
]

WHICH = ("auto", "final", "checkpoint")
SPLITS = ("train", "test")


class RunLoadError(ValueError):
    """A run directory cannot be analysed (missing files, incompatible models)."""


@dataclass
class LoadedRun:
    """A run's resolved config, its dataset (CPU, unnormalised), the model template and
    the stored flat parameters ``w`` (on ``device``)."""

    path: Path
    config: Any
    dataset: Any
    flat: FlatModel
    w: torch.Tensor
    source: str

    def data(self, split: str = "train", samples: int | None = None, seed: int = 0,
             device: torch.device | str | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        return split_data(self.dataset, split, samples, seed, device if device is not None else self.w.device)

    def client_indices(self) -> list[torch.Tensor]:
        return client_indices(self.config, self.dataset)


def run_handle(run_dir: str | Path):

    path = Path(run_dir).expanduser()
    if not path.is_dir():
        raise RunLoadError(f"run directory {quote(str(path))} does not exist")
    run = Run(path, path.name)
    if not run.exists():
        raise RunLoadError(f"{quote(str(path))} is not a run directory: it has no config.json")
    return run


def resolved_config(run, data_root: str | None):

    stored = dict(run.config())
    if data_root is not None:
        stored["data_root"] = str(data_root)
    stored["device"] = "cpu"  # where the run trained does not matter here
    try:
        return resolve_config(stored)
    except ConfigError as exc:
        raise RunLoadError(f"the config of run {quote(str(run.path))} no longer resolves: {exc}") from None


def build_template(cfg, input_shape, num_classes, device: torch.device | str = "cpu") -> FlatModel:
    """The model template the engine builds for ``cfg`` (same init seed convention)."""

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(cfg.seed, "init"))
        module = build_model(cfg.model, input_shape, num_classes)
    return FlatModel(module.to(device))


def load_run_weights(run, flat: FlatModel, which: str = "auto") -> tuple[torch.Tensor, str]:
    """The stored flat parameters of ``run`` for ``flat``'s architecture, and their source
    (``"final"`` or ``"checkpoint"``); ``which="auto"`` prefers the final model."""
    if which not in WHICH:
        raise RunLoadError(f"which must be one of {', '.join(WHICH)}, got {quote(which)}")
    device = next(flat.module.parameters()).device
    if which in ("auto", "final"):
        state = run.load_final_model(map_location="cpu")
        if state is not None:
            module = flat.module
            try:
                module.load_state_dict(state, strict=True)
            except RuntimeError as exc:
                raise RunLoadError(f"final_model.pt of {quote(str(run.path))} does not fit the "
                                   f"model {type(module).__name__}: {exc}") from None
            return flat.flatten(module).to(device), "final"
        if which == "final":
            raise RunLoadError(f"run {quote(str(run.path))} has no final_model.pt (not finished?)")
    checkpoint = run.load_checkpoint(map_location="cpu")
    if checkpoint is None or "w" not in checkpoint:
        raise RunLoadError(f"run {quote(str(run.path))} has neither final_model.pt nor a checkpoint with 'w'")
    w = checkpoint["w"]
    if w.shape != (flat.num_params,):
        raise RunLoadError(f"the checkpoint of {quote(str(run.path))} has {w.numel()} parameters, "
                           f"the model {flat.num_params}")
    return w.to(device=device, dtype=torch.float32), "checkpoint"


def load_run(run_dir: str | Path, device: torch.device | str = "cpu", which: str = "auto",
             data_root: str | None = None, dataset=None) -> LoadedRun:
    """Load a run's config, dataset, model template and stored weights (see module docstring).

    ``dataset``: reuse an already loaded :class:`flcore.data.Dataset` (e.g. when loading
    two runs on the same data).  ``data_root`` overrides the stored data folder (CIFAR).
    """
    run = run_handle(run_dir)
    device = resolve_device(device)
    cfg = resolved_config(run, data_root)
    if dataset is None:
        try:
            dataset = hold_out_validation(load_dataset(cfg.dataset, cfg.data_root, download=False,
                                                       num_samples=cfg.num_samples, seed=cfg.seed), cfg.validation)
        except DatasetError as exc:
            raise RunLoadError(str(exc)) from None
    flat = build_template(cfg, dataset.input_shape, dataset.num_classes, device)
    w, source = load_run_weights(run, flat, which)
    return LoadedRun(run.path, cfg, dataset, flat, w, source)


def split_data(dataset, split: str = "train", samples: int | None = None, seed: int = 0,
               device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Normalised inputs and labels of a split (optionally a random subset, see module
    docstring), on ``device``."""

    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {quote(split)}")
    x = dataset.train_x if split == "train" else dataset.test_x
    y = dataset.train_y if split == "train" else dataset.test_y
    if samples is not None:
        if samples < 1:
            raise ValueError(f"samples must be >= 1, got {samples}")
        if samples < x.shape[0]:
            keep = torch.randperm(x.shape[0], generator=generator(seed, "analysis/subset"))[:samples]
            keep = keep.sort().values
            x, y = x[keep], y[keep]
    x = normalize(x, dataset.mean, dataset.std)
    return x.to(device), y.to(device)


def client_indices(cfg, dataset) -> list[torch.Tensor]:
    """The run's client partition of the training set (indices into ``train_x``), as
    ``build_federated_data`` computes it."""

    parts = client_partition(cfg, dataset)
    return [torch.as_tensor(p, dtype=torch.long) for p in parts]
