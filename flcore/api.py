"""One function to run an experiment end to end, reusing the run store.

``run_experiment`` resolves and validates the config (before any compute), finds the run
in the store by the hash of its canonical config, returns the stored summary when the run
has already finished or diverged, resumes it from its last checkpoint when it was
interrupted, and otherwise runs it from the start.  It is built on the round-level API,
:meth:`flcore.Simulation.from_config` and :meth:`~flcore.Simulation.run_rounds` (whose
rounds are :meth:`~flcore.Simulation.step`'s).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from .config import ExperimentConfig, resolve_config

TERMINAL_STATUSES = ("finished", "diverged")


def run_experiment(config: ExperimentConfig | dict[str, Any], store: str | Path | None = "runs",
                   progress: bool = False, chunk_size: int | None = None,
                   callbacks: tuple = ()) -> dict[str, Any]:
    """Run (or resume, or look up) one experiment; returns its summary.

    The summary has ``status`` (finished | diverged), ``rounds_done``, ``final_accuracy``,
    ``mean_last_100``, ``best_accuracy``, ``run_dir``, ``run_id`` and, for a diverged run,
    ``diverged_round``.  ``store=None`` runs without recording anything.  ``callbacks``
    (e.g. ``flcore.analysis.ProbeCallback``) add training-time probes to the metrics log;
    they do not change the run id, so a run already finished without them is returned as is.
    """
    from .sim import Simulation, resolve_device
    from .store import RunStore

    cfg = config if isinstance(config, ExperimentConfig) else resolve_config(config)
    resolve_device(cfg.device)  # an unavailable device fails before the store is touched
    if store is not None:
        existing = RunStore(store).run(cfg.run_id())
        if existing.exists() and existing.status().get("status") in TERMINAL_STATUSES:
            return _decorate(existing.summary(), cfg, existing)
    # the round-level API; missing data fails in from_config, before the run is created
    sim = Simulation.from_config(cfg, store=store, progress=progress, chunk_size=chunk_size, callbacks=callbacks)
    summary = sim.run_rounds()
    return _decorate(summary, cfg, sim.run)


def _decorate(summary: dict[str, Any], cfg: ExperimentConfig, run) -> dict[str, Any]:
    out = dict(summary)
    out.update({
        "run_id": cfg.run_id(),
        "run_dir": str(run.path) if run is not None else None,
        "method": cfg.method,
        "dataset": cfg.dataset,
        "scale": cfg.scale,
    })
    return out
