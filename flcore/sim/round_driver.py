"""The round driver: runs trained round by round, a run alone being a group of one.

One :class:`RoundDriver` trains R runs (R :class:`~flcore.sim.engine.Simulation` s; R = 1
for ``flcore run``, R > 1 for a planned group, :mod:`flcore.sim.multi_run`).  It owns the
whole round: the draws of every run's clients (one host-to-device transfer), the server's
probe and broadcast, local training in chunks with the out-of-memory halving, the
server's update, and the loop with each run's record -- resume from its checkpoint,
metrics rows, checkpoints, divergence, the finish and its summary.

Single-run and group training differ only in the leading run axis
(:mod:`flcore.sim.run_axis`): a group's clients are the ``R*K`` rows of one computation,
each row with its run's start, global model, broadcast, state rows and learning rate;
for one run every merged value *is* the run's own (a ``[P]`` start, a Python learning
rate), so a run alone computes exactly what it did before groups existed.  Two things
stay with runs alone: the sequential engine's one-client chunks (a group's rows go
through the looped gradient together, one chunk), and CUDA graphs
(:mod:`flcore.sim.cuda_graphs`: a group's per-row columns are new tensors every round,
which a captured graph would read at their old addresses).

Each run keeps everything that makes it *that* run -- its own global model, server and
client state, schedule, random draws from ``(seed, purpose, round, client)`` and run
record -- so a run in a group has the same record, run id and resume semantics as one
trained alone, and a run interrupted inside a group resumes from its own checkpoint.
"""
from __future__ import annotations

import sys
import time
from typing import Any

import torch
from tqdm import tqdm

from flcore.record_format import CAPPED, is_evaluation_round, stop_round, summarize
from flcore.sim.local_training import train_chunk
from flcore.sim.precision import precision_mode
from flcore.sim.round_draws import RoundDraws, stack_plans, static_width
from flcore.sim.row_engine import evaluate_rows, kernel_of, row_grad_fn
from flcore.sim.run_axis import concat_data, merge_parts, merge_per_run, shift_plan, slice_parts

__all__ = ["RoundDriver", "RoundTiming", "RunTrack"]

#: Rows of one local-training computation under the ``rows`` engine on a CPU: the row
#: kernel's time per row is lowest from about 20 to 40 rows (2 cores: 267 us a row at 5,
#: 204 at 30, 254 at 150, whose activations leave the core's cache), so larger groups are
#: trained in chunks of this size.
ROWS_PER_CHUNK = 40


class RoundTiming:
    """Wall-clock seconds of a run's training rounds, for the status record.

    A round's time covers local training, aggregation and the server step (until the
    device is done with them), not the evaluations, probes or checkpoints: the FedLESAM
    paper's "time between two communications" (its Table 8).  ``record()`` gives
    ``train_seconds`` (their sum), ``timed_rounds`` (how many rounds were timed: the rounds
    of this session, so a resumed run averages over the rounds it trained after
    resuming), ``seconds_per_round`` (their mean) and ``seconds_per_round_sd`` (the rounds'
    standard deviation).  Runs trained in a group record each round's time divided by
    the runs trained in it, and ``batch_runs`` (the group's size): their times compare
    with runs of groups of the same size only.
    """

    def __init__(self) -> None:
        self.seconds = 0.0
        self.rounds = 0
        self._sum_sq = 0.0

    def add(self, seconds: float) -> None:
        self.seconds += seconds
        self._sum_sq += seconds * seconds
        self.rounds += 1

    def record(self) -> dict:
        if not self.rounds:
            return {}
        mean = self.seconds / self.rounds
        var = max(0.0, (self._sum_sq - self.rounds * mean * mean) / max(1, self.rounds - 1))
        return {"train_seconds": self.seconds, "timed_rounds": self.rounds,
                "seconds_per_round": mean, "seconds_per_round_sd": var ** 0.5}


class RoundDriver:
    """Trains the runs of ``sims`` (one or more simulations of one group) round by round
    (module docstring).  ``chunk_size`` bounds the clients of one computation (None: the
    whole round); it halves when a round does not fit in the device's memory."""

    def __init__(self, sims: list, progress: bool = False, chunk_size: int | None = None,
                 description: str = ""):
        if not sims:
            raise ValueError("a group needs at least one run")
        self.sims = list(sims)
        first = self.sims[0]
        self.alone = len(self.sims) == 1
        self.device = first.device
        self.progress = progress
        self.chunk_size = chunk_size
        self.description = description or (f"{first.cfg.method}/{first.cfg.dataset}" if self.alone
                                           else f"{first.cfg.method} x{len(self.sims)}")
        self.engine = first.engine
        if self.alone:
            self.data, self.offsets = first.data, [0]
        else:
            self.data, self.offsets = concat_data([s.data for s in self.sims])
        #: the row kernel of the runs' model under the ``rows`` engine (:mod:`flcore.sim.row_engine`)
        self.kernel = kernel_of(first.flat) if self.engine == "rows" else None
        self.grad_fn = (row_grad_fn(first.flat, self.kernel) if self.kernel is not None
                        else first.flat.grad_fn(batched=self.engine == "batched"))
        self._test_set_of: list[int] | None = None  # which runs share a test set (rows engine)
        self.weight_mask = first.flat.weight_mask
        self.static_width = static_width(first.cfg.batch_size, [max(s.data.client_sizes) for s in self.sims],
                                         self.engine, self.device)
        #: the whole group's client procedure, merged once (rounds that train every run)
        self._group_update = None if self.alone else \
            merge_parts([s.client_update for s in self.sims], [s.cfg.per_round for s in self.sims], first.w)

    # ------------------------------------------------------------------ one round
    def draw(self, members: list[int], round: int) -> tuple[list[tuple[list[int], list]], RoundDraws]:
        """Each member's sampled clients and batch plans, and the round's draws of all of
        them on the device in one transfer.  A run alone draws through its own
        :meth:`flcore.sim.engine.Simulation.draw_round`; a group's plans index the concatenated training
        set (each run's shifted by its offset)."""
        if self.alone:
            clients, plans, draws = self.sims[0].draw_round(round)
            return [(clients, plans)], draws
        picked = []
        for m in members:
            clients, plans = self.sims[m].plan_round(round)
            picked.append((clients, [shift_plan(p, self.offsets[m]) for p in plans]))
        draws = stack_plans([p for _, plans in picked for p in plans], self.device, self.sims[members[0]].w.dtype,
                            self.static_width)
        return picked, draws

    def train_round(self, members: list[int], round: int) -> list[dict]:
        """Round ``round`` of the runs ``members`` (indices into ``sims``): probe (where the
        server asks for one), broadcast, local training, server update.  Returns per member
        ``clients``, ``plans``, ``start``, ``broadcast`` and ``uploads``."""
        picked, draws = self.draw(members, round)
        sims = [self.sims[m] for m in members]
        ids, lo = [], 0
        for _, plans in picked:
            ids.append(draws.client_ids if self.alone else draws.client_ids[lo:lo + len(plans)])
            lo += len(plans)
        if sims[0].server.needs_probe:
            # a first exchange from w^t whose client-state updates are discarded
            probes = self.local_training(sims, [s.w for s in sims], [{} for _ in sims], draws, ids, round)
            for sim, (uploads, _), rows in zip(sims, probes, ids):
                sim.server.probe(sim.w, uploads, sim.client_sizes[rows], sim.server_state, round,
                                 sim.data.num_clients)
        sent = [sim.server.broadcast(sim.w, sim.server_state, round) for sim in sims]
        results = self.local_training(sims, [s for s, _ in sent], [b for _, b in sent], draws, ids, round)
        out = []
        for sim, (clients, plans), rows, (start, broadcast), (uploads, state_rows) in zip(sims, picked, ids, sent,
                                                                                          results):
            sim.apply_round(round, rows, start, uploads, state_rows)
            out.append({"clients": clients, "plans": plans, "start": start, "broadcast": broadcast,
                        "uploads": uploads})
        return out

    def local_training(self, sims: list, starts: list, broadcasts: list[dict], draws: RoundDraws,
                       ids: list[torch.Tensor], round: int) -> list[tuple[dict, dict]]:
        """Local training of the clients of ``draws`` (``ids[i]``: run ``sims[i]``'s clients,
        in draw order) from their runs' ``starts``; returns per run ``(uploads,
        state_rows)``.

        Chunks of ``chunk_size`` clients (all at once when None; one at a time for a run
        alone under the sequential engine).  A round whose chunk does not fit in the
        device's memory is retried with half as many clients per computation (down to
        one), and later rounds keep the smaller chunk: local training is a pure function
        of its inputs (the client-state rows it updates are returned, not written), so a
        retried round gives what an unconstrained one would.
        """
        rows = [len(i) for i in ids]
        like = sims[0].w
        per_row: list = []  # the merged values that hold one row per client

        def merged(values: list):
            value = merge_per_run(values, rows, like)
            if value is not values[0]:
                per_row.append(value)
            return value

        start = merged(starts)
        global_model = merged([s.w for s in sims])
        broadcast = {k: merged([b[k] for b in broadcasts]) for k in sorted({k for b in broadcasts for k in b})}
        lr = merged([s.client_lr(round) for s in sims])
        if len(sims) == len(self.sims) and self._group_update is not None:
            client_update = self._group_update
        else:
            client_update = merge_parts([s.client_update for s in sims], rows, like)
        columns = client_update is not sims[0].client_update  # per-row fields to cut for each chunk
        step_graphs = sims[0].step_graphs if self.alone and self.engine == "batched" else None
        total = len(draws)
        while True:
            size = 1 if self.alone and self.engine == "sequential" else self.chunk_size or self._rows_at_once(total)
            try:
                outputs = []
                with precision_mode(sims[0].cfg.precision, self.device):
                    for lo in range(0, total, size):
                        hi = min(lo + size, total)

                        def cut(value, lo=lo, hi=hi):
                            return value[lo:hi] if any(value is p for p in per_row) else value

                        outputs.append(train_chunk(
                            slice_parts(client_update, lo, hi, total) if columns else client_update,
                            self.data, cut(start), draws.rows(lo, hi), round, cut(lr), self.grad_fn,
                            _state_rows(sims, ids, lo, hi), {k: cut(v) for k, v in broadcast.items()},
                            cut(global_model), self.weight_mask, step_graphs))
                break
            except torch.cuda.OutOfMemoryError:
                if size <= 1:
                    raise
                self.chunk_size = size // 2
                if step_graphs is not None:  # their memory goes; the smaller chunk captures anew
                    step_graphs.graphs.clear()
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                print(f"flcore: {size} clients at once do not fit in {self.device} memory; "
                      f"training {self.chunk_size} at a time", file=sys.stderr)
        if len(outputs) == 1:
            uploads = {k: v for k, v in outputs[0].items() if k != "client_state"}
            state = outputs[0]["client_state"]
        else:
            uploads = {k: torch.cat([o[k] for o in outputs]) for k in outputs[0] if k != "client_state"}
            state = {n: torch.cat([o["client_state"][n] for o in outputs]) for n in outputs[0]["client_state"]}
        if self.alone:
            return [(uploads, state)]
        results, lo = [], 0
        for r in rows:
            results.append(({k: v[lo:lo + r] for k, v in uploads.items()}, {n: t[lo:lo + r] for n, t in state.items()}))
            lo += r
        return results

    def _rows_at_once(self, total: int) -> int:
        """Rows of one computation when no chunk size is set: all of them, but under the
        ``rows`` engine on a CPU chunks of about :data:`ROWS_PER_CHUNK`, equal in size."""
        if self.engine != "rows" or self.device.type != "cpu" or total <= ROWS_PER_CHUNK:
            return total
        chunks = -(-total // ROWS_PER_CHUNK)
        return -(-total // chunks)

    def evaluate_together(self, members: list[int], done: int) -> dict[int, tuple[float, float]]:
        """Test accuracy and loss of the members that evaluate after round ``done``, the
        runs sharing a test set in one pass of the row kernel (:func:`evaluate_rows`)."""
        if self._test_set_of is None:
            self._test_set_of = _test_set_ids(self.sims)
        by_set: dict[int, list[int]] = {}
        for m in members:
            if is_evaluation_round(done, self.sims[m].cfg):
                by_set.setdefault(self._test_set_of[m], []).append(m)
        out: dict[int, tuple[float, float]] = {}
        for shared in by_set.values():
            sims = [self.sims[m] for m in shared]
            first = sims[0]
            W = torch.stack([s.server.eval_params(s.w, s.server_state) for s in sims])
            with precision_mode(first.cfg.precision, self.device):
                acc, loss = evaluate_rows(self.kernel, W, first.data.test_x, first.data.test_y,
                                          first.cfg.eval_batch_size)
            for m, accuracy, mean_loss in zip(shared, acc.tolist(), loss.tolist()):
                out[m] = (accuracy, mean_loss)
        return out

    # ------------------------------------------------------------------ the loop
    def run_rounds(self) -> list[dict]:
        """Train every run to its end (each resumed from its checkpoint); returns their
        summaries in order."""
        label = self.engine if self.alone else "batched-runs"
        tracks = [RunTrack(sim, label, len(self.sims)) for sim in self.sims]
        rounds = max(t.stop for t in tracks)
        first = min(sim.rounds_done for sim in self.sims)
        bar = None
        if self.progress:
            bar = tqdm(total=rounds, initial=first, unit="round", file=sys.stderr, dynamic_ncols=True,
                       desc=self.description)
        started = time.perf_counter()
        try:
            for round in range(first, rounds):
                members = [m for m, t in enumerate(tracks) if t.open and self.sims[m].rounds_done == round]
                if not members:
                    continue
                round_started = time.perf_counter()
                losses = [r["uploads"]["train_loss"].mean() for r in self.train_round(members, round)]
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
                share = (time.perf_counter() - round_started) / len(members)
                evaluations = self.evaluate_together(members, round + 1) if self.kernel is not None else {}
                for m, loss in zip(members, losses):
                    tracks[m].timing.add(share)
                    accuracy = tracks[m].after_round(round, loss, evaluations.get(m))
                    if bar is not None and accuracy is not None:
                        bar.set_postfix(test_acc=f"{accuracy:.4f}")
                if bar is not None:
                    bar.update(1)
                if not any(t.open for t in tracks):
                    break
        except KeyboardInterrupt:
            for t in tracks:
                t.interrupted()
            raise
        finally:
            if bar is not None:
                bar.close()
        elapsed = time.perf_counter() - started
        return [t.finish(elapsed) for t in tracks]


def _test_set_ids(sims: list) -> list[int]:
    """For each of ``sims``, the index of the first one whose test set equals its own (the
    same tensors, or equal ones): the runs evaluated together."""
    ids: list[int] = []
    for i, sim in enumerate(sims):
        x, y = sim.data.test_x, sim.data.test_y
        for j in sorted(set(ids)):
            other = sims[j].data
            if (other.test_x is x and other.test_y is y) or (
                    other.test_x.shape == x.shape and other.test_y.shape == y.shape
                    and torch.equal(other.test_x, x) and torch.equal(other.test_y, y)):
                ids.append(j)
                break
        else:
            ids.append(i)
    return ids


def _state_rows(sims: list, ids: list[torch.Tensor], lo: int, hi: int) -> dict[str, torch.Tensor]:
    """The client-state rows of the chunk of rows ``lo:hi`` (rows in run order, run ``i``'s
    clients ``ids[i]``), gathered from each run's tables for this chunk only."""
    pieces, at = [], 0
    for sim, clients in zip(sims, ids):
        a, b = max(lo, at), min(hi, at + len(clients))
        if a < b:
            chosen = clients if (a - at, b - at) == (0, len(clients)) else clients[a - at:b - at]
            pieces.append({name: table[chosen] for name, table in sim.client_state.items()})
        at += len(clients)
    if len(pieces) == 1:
        return pieces[0]
    return {name: torch.cat([p[name] for p in pieces]) for name in sims[0].client_state}


class RunTrack:
    """The per-run side of the loop: resume, metrics rows (training-time probes included),
    checkpoints, divergence and the summary."""

    def __init__(self, sim, engine: str, batch_runs: int):
        self.sim = sim
        self.batch_runs = batch_runs
        self.status, self.diverged_round = "finished", None
        #: each round's training time, shared equally by the runs trained in it
        self.timing = RoundTiming()
        sim.open_record(engine)
        self.stop = stop_round(sim.cfg)
        self.open = sim.rounds_done < self.stop

    def _append(self, row: dict) -> None:
        self.sim.metrics.append(row)
        if self.sim.run is not None:
            # durable at the next checkpoint or status record: a resume keeps the rows
            # up to its checkpoint only (an fsync a row was a tenth of a small run)
            self.sim.run.append_metrics(row, durable=False)

    def after_round(self, round: int, train_loss: torch.Tensor,
                    evaluation: tuple[float, float] | None = None) -> float | None:
        """Record round ``round`` (0-based) of the run; returns its test accuracy when the
        round was evaluated (``evaluation``: its test accuracy and loss, computed with the
        group's; None: evaluated here)."""
        sim, cfg, run = self.sim, self.sim.cfg, self.sim.run
        done = round + 1
        sim.rounds_done = done
        if not (bool(torch.isfinite(train_loss)) and bool(torch.isfinite(sim.w).all())):
            self.status, self.diverged_round, self.open = "diverged", done, False
            self._append({"round": done, "train_loss": float(train_loss), "test_accuracy": None, "test_loss": None})
            return None
        probed = sim.run_callbacks(done) if sim.callbacks else {}
        evaluated = is_evaluation_round(done, cfg)
        if probed and not evaluated:
            self._append({"round": done, "train_loss": float(train_loss), **probed})
        accuracy = None
        if evaluated:
            accuracy, loss = sim.evaluate() if evaluation is None else evaluation
            row: dict[str, Any] = {"round": done, "train_loss": float(train_loss), "test_accuracy": accuracy,
                                   "test_loss": loss, "lr": sim.client_lr(round)}
            if cfg.client_accuracy and (done % cfg.eval_every == 0 or done == cfg.rounds):
                row["client_accuracy"] = sim.client_accuracy()
            row.update(probed)
            self._append(row)
        if run is not None and done % cfg.checkpoint_every == 0 and done < self.stop:
            run.save_checkpoint(sim.state())
            run.set_status("running", rounds_done=done)
        if done >= self.stop:
            self.open = False
        return accuracy

    def interrupted(self) -> None:
        if self.sim.run is not None:
            self.sim.run.set_status("interrupted", rounds_done=self.sim.rounds_done)

    def finish(self, elapsed: float) -> dict:
        sim, run = self.sim, self.sim.run
        if self.status == "finished" and sim.rounds_done < sim.cfg.rounds:
            self.status = CAPPED
            sim.record_preview()
        summary = summarize(sim.metrics, sim.cfg, self.status, sim.rounds_done)
        if self.diverged_round is not None:
            summary["diverged_round"] = self.diverged_round
        if run is not None:
            run.save_checkpoint(sim.state())
            if self.status in ("finished", CAPPED):  # a capped run's: the model at its cap, until it finishes
                run.save_final_model(sim.flat.state_dict(sim.server.eval_params(sim.w, sim.server_state)))
            run.write_summary(summary)
            run.set_status(self.status, rounds_done=sim.rounds_done, diverged_round=self.diverged_round,
                           wall_time_s=elapsed, **self.timing.record(), batch_runs=self.batch_runs,
                           **({"rounds": sim.cfg.rounds} if self.status == CAPPED else {}))
        summary["wall_time_s"] = elapsed
        return summary
