"""What a run's record means, shared by the engine that writes it and the store that checks it.

- :data:`CHECKPOINT_FORMAT`: the version of the checkpoint layout
  (``{"format", "rounds_done", "w", "server_state", "client_state"}``);
- :func:`is_evaluation_round`: the rounds whose metrics row holds a test accuracy;
- :func:`summarize`: a run's summary, recomputed from its metrics rows;
- :func:`stop_round` and :func:`is_preview_round`: where a run capped by ``max_rounds``
  stops for now, and the extra evaluation it records there (its row is marked
  ``"preview": true`` and dropped when the run continues, so a continued run's log is the
  uninterrupted run's).

Both sides import these from here, so neither the simulation nor the store needs the other.
"""
from __future__ import annotations

#: The version of the checkpoint layout the engine writes and the store checks.
CHECKPOINT_FORMAT = 2


def is_evaluation_round(done: int, cfg) -> bool:
    """Evaluate every ``eval_every`` rounds, every ``eval_last_every``-th round of the last
    ``eval_last`` (counted back from the last round) and after the final round (the FedSAM
    paper's protocol: every 100, then every round of the last 100, whose mean is reported;
    the small scale evaluates every fifth round of its last 100: their mean differs from
    the 100 rounds' by 0.5 points, a 3 % larger variance of a paired difference of seeds).
    ``cfg``: anything with ``rounds``, ``eval_every``, ``eval_last`` and optionally
    ``eval_last_every`` (1 when absent)."""
    late = done > cfg.rounds - cfg.eval_last and (cfg.rounds - done) % getattr(cfg, "eval_last_every", 1) == 0
    return done % cfg.eval_every == 0 or late or done == cfg.rounds


def stop_round(cfg) -> int:
    """The round a run trains to now: ``rounds``, or ``max_rounds`` when that is lower (a
    capped preview; the run keeps its protocol, ``rounds``, and continues later).
    ``cfg``: anything with ``rounds`` and optionally ``max_rounds``."""
    cap = getattr(cfg, "max_rounds", None)
    return cfg.rounds if cap is None else min(cfg.rounds, cap)


def is_preview_round(done: int, cfg) -> bool:
    """The cap round of a capped run when the protocol does not evaluate there: it is
    evaluated anyway, so a preview ends on a measured accuracy."""
    return done == stop_round(cfg) < cfg.rounds and not is_evaluation_round(done, cfg)


#: The status of a run stopped at its ``max_rounds`` cap before its last round.
CAPPED = "capped"


def trained_enough(status: dict, cfg) -> bool:
    """Whether a run whose status record is ``status`` needs no more training for ``cfg``:
    it finished or diverged, or it is capped at ``cfg``'s own cap or beyond (a capped run is
    not finished: without a cap, or with a higher one, it continues)."""
    name = status.get("status")
    if name in ("finished", "diverged"):
        return True
    rounds_done = status.get("rounds_done")
    return (name == CAPPED and getattr(cfg, "max_rounds", None) is not None and isinstance(rounds_done, int)
            and rounds_done >= stop_round(cfg))


def summarize(metrics: list[dict], cfg, status: str, rounds_done: int) -> dict:
    """Final accuracy, mean over the last 100 rounds (or all rounds if fewer), best.

    A capped run (status ``capped``) is summarised like a finished one over the rounds it
    has done: a preview, whose verdicts the claims engine does not decide."""
    evaluated = [m for m in metrics if m.get("test_accuracy") is not None]
    window = min(100, cfg.rounds)
    last = [m["test_accuracy"] for m in evaluated if m["round"] > rounds_done - window]
    finished = status in ("finished", CAPPED)
    return {
        "status": status,
        "rounds_done": rounds_done,
        "final_accuracy": evaluated[-1]["test_accuracy"] if finished and evaluated else None,
        "mean_last_100": (sum(last) / len(last)) if finished and last else None,
        "best_accuracy": max((m["test_accuracy"] for m in evaluated), default=None),
    }
