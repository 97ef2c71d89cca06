"""The bundle tests' source: a store with one finished smoke run of 4 rounds, and its bundle."""
from __future__ import annotations

from pathlib import Path

import torch

from flcore import resolve_config
from flcore.store import RunStore
from flcore.store.bundle import export_bundle


def bundle_source(tmp_path_factory):
    """``(store, run, bundle path)``: one finished smoke run, exported as a GPU machine would."""
    from flcore.api import run_experiment

    torch.set_num_threads(1)
    store = tmp_path_factory.mktemp("source")
    summary = run_experiment(resolve_config(scale="smoke", device="cpu", rounds=4, eval_every=1), store=store)
    run = RunStore(store).run(Path(summary["run_dir"]).name)
    path = tmp_path_factory.mktemp("bundles") / "results.tar"
    export_bundle([run], path, scale="smoke", device="NVIDIA H100 80GB HBM3")
    return store, run, path
