"""What a run's record means, shared by the engine that writes it and the store that checks it.

- :data:`CHECKPOINT_FORMAT`: the version of the checkpoint layout
  (``{"format", "rounds_done", "w", "server_state", "client_state"}``);
- :func:`is_evaluation_round`: the rounds whose metrics row holds a test accuracy;
- :func:`summarize`: a run's summary, recomputed from its metrics rows.

Both sides import these from here, so neither the simulation nor the store needs the other.
"""
from __future__ import annotations

#: The version of the checkpoint layout the engine writes and the store checks.
CHECKPOINT_FORMAT = 2


def is_evaluation_round(done: int, cfg) -> bool:
    """Evaluate every ``eval_every`` rounds, every round of the last ``eval_last`` and
    after the final round (the FedSAM paper's protocol: every 100, then every round of the
    last 100, whose mean is reported).  ``cfg``: anything with ``rounds``, ``eval_every``
    and ``eval_last``."""
    return done % cfg.eval_every == 0 or done > cfg.rounds - cfg.eval_last or done == cfg.rounds


def summarize(metrics: list[dict], cfg, status: str, rounds_done: int) -> dict:
    """Final accuracy, mean over the last 100 rounds (or all rounds if fewer), best."""
    evaluated = [m for m in metrics if m.get("test_accuracy") is not None]
    window = min(100, cfg.rounds)
    last = [m["test_accuracy"] for m in evaluated if m["round"] > rounds_done - window]
    finished = status == "finished"
    return {
        "status": status,
        "rounds_done": rounds_done,
        "final_accuracy": evaluated[-1]["test_accuracy"] if finished and evaluated else None,
        "mean_last_100": (sum(last) / len(last)) if finished and last else None,
        "best_accuracy": max((m["test_accuracy"] for m in evaluated), default=None),
    }
