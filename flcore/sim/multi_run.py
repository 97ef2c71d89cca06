"""Many runs as one computation: R runs of K clients trained as one ``[R*K, P]`` batch.

Runs that share a model and a protocol shape (data set, model, clients per round, local
steps, rounds, evaluation schedule, method) and differ in their seed, their partition or
the values of some hyper-parameters train together.  Each run keeps everything that
makes it *that* run -- its own :class:`~flcore.Simulation` (global model, server and
client state, lr schedule, run record), its own client sampling and batch plans drawn
from ``(seed, purpose, round, client)`` -- and only the clients' local training, the
bulk of the compute, is one computation over the ``R*K`` clients of a round:

- every row of the batch gets its run's start point, global model, broadcast vectors,
  client-state rows and learning rate (a per-row column where runs differ);
- the training sets of the runs are concatenated and each run's batch indices shifted
  by its offset, so one gather serves every run;
- hyper-parameters that differ between the runs of a group (``rho``, ``eta``, ``mu``;
  ``lr`` through the schedules) become per-row columns of the parts that use them.

Local training of a client is a pure function of these inputs, so each run's numbers
equal what it gives alone, to float tolerance (``tests/test_multi_run.py`` checks every
method family).  The batch's gradients come from the engine the runs' model and device
resolve to (:func:`flcore.sim.engine.resolve_engine`): one ``vmap`` over the ``R*K`` rows,
or, for the image models on a CPU, a loop over them, ten times faster there.
The server step, evaluation, checkpoints and metrics stay per run, so a run trained in a
group has the same record, run id and resume semantics as one trained alone, and a run
interrupted inside a group resumes from its own checkpoint.

Methods whose client parts cannot take per-row inputs (they read the global model or
the broadcast as one vector, or keep a non-row-wise scratch) are not in
:func:`run_batchable`; the planner gives each of their runs a group of its own.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from typing import Any

import torch

from flcore.algorithms.schedules import local_epochs_at
from flcore.config import PARTITION_FIELDS
from flcore.record_format import CAPPED, is_evaluation_round, stop_round, summarize
from flcore.sim.engine import RoundTiming, Simulation, static_width
from flcore.sim.federated_data import FederatedData, build_federated_data
from flcore.sim.local_training import train_chunk
from flcore.sim.precision import precision_mode
from flcore.sim.round_draws import RoundDraws, stack_plans, to_device_once
from flcore.sim.sampling import ClientPlan, plan_client_round, sample_clients

#: Every method's local training takes per-row inputs, so clients of different runs can
#: share one batch (checked against runs alone, per family, in tests/test_multi_run.py) --
#: FedFA is the exception: its server broadcasts class anchors ``[C, d]`` that its client
#: parts read as one matrix for the whole chunk.
NOT_RUN_BATCHABLE = frozenset({"fedfa", "fedfa+ima"})


def run_batchable(method: str) -> bool:
    return method not in NOT_RUN_BATCHABLE
#: Config fields runs of one group may differ in, whatever the method: they change
#: the data and the random draws, not the shape of the computation.
RUN_FIELDS = frozenset({"seed", "num_samples"} | {f for fs in PARTITION_FIELDS.values() for f in fs})
#: Hyper-parameters that may also differ for these methods: they become per-row columns
#: (``lr`` through ``RoundContext.lr``, the others as fields of the perturbation or
#: correction parts); methods whose parts read ``ctx.lr`` beyond the SGD step (SCAFFOLD,
#: FedCM) are not listed.
COLUMN_FIELDS = {
    "fedavg": ("lr",), "fedsam": ("lr", "rho"), "fedasam": ("lr", "rho", "eta"),
    "fedprox": ("lr", "mu"),
}


def group_key(cfg) -> tuple:
    """What runs must share to be trained as one batch: the canonical config without the
    fields that may differ between them (:data:`RUN_FIELDS`, the method's
    :data:`COLUMN_FIELDS`).  A run of a method outside :func:`run_batchable`, one that
    records probes or snapshots (:mod:`flcore.analysis.recording`), or a *timed* run (its
    round times are the measurement: a batch would record a share of a shared round) has a
    key of its own (its run id)."""
    canonical = cfg.canonical()
    if not run_batchable(cfg.method) or cfg.probes or cfg.snapshot_rounds or cfg.timed:  # these train alone
        return ("alone", cfg.run_id())
    free = RUN_FIELDS | set(COLUMN_FIELDS.get(cfg.method, ()))
    shared = {k: v for k, v in canonical.items() if k not in free}
    shared["eval_batch_size"] = cfg.eval_batch_size
    return tuple(sorted((k, repr(v)) for k, v in shared.items()))


# ----------------------------------------------------------------------------- merging

def _column(values: list, rows_per_run: list[int], device, dtype) -> torch.Tensor:
    """One value per run -> a ``[sum(rows), 1]`` column, each run's value repeated on its
    rows: built on the host, sent without waiting (:func:`to_device_once`)."""
    host = torch.tensor(values, dtype=dtype).repeat_interleave(torch.tensor(rows_per_run)).unsqueeze(-1)
    return to_device_once({"column": host}, device)["column"]


def _repeat_rows(stacked: torch.Tensor, rows_per_run: list[int]) -> torch.Tensor:
    """Row ``i`` of ``stacked`` repeated ``rows_per_run[i]`` times (no host-to-device copy
    of the counts, unlike ``repeat_interleave`` with a tensor of repeats)."""
    if len(set(rows_per_run)) == 1:
        return stacked.repeat_interleave(rows_per_run[0], dim=0)
    return torch.cat([stacked[i:i + 1].expand(r, *stacked.shape[1:]) for i, r in enumerate(rows_per_run)])


def _equal(a, b) -> bool:
    """Equality that looks into tensors, tuples and dataclass parts (whose fields may be tensors)."""
    if a is b:
        return True
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape
                and a.dtype == b.dtype and torch.equal(a, b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(_equal(getattr(a, f.name), getattr(b, f.name))
                                          for f in dataclasses.fields(a))
    return a == b


def _same(values: list) -> bool:
    return all(_equal(values[0], v) for v in values[1:])


def merge_per_run(values: list, rows_per_run: list[int], like: torch.Tensor):
    """Per-run values of one input -> one value for the whole batch of rows.

    Equal values stay as they are; model-sized vectors ``[P]`` become rows ``[R*K, P]``;
    scalars (Python numbers or 0-d tensors) become a ``[R*K, 1]`` column.  Tensors are
    compared by identity only: comparing their values would read them back from the
    device in every round.
    """
    first = values[0]
    if all(v is first for v in values) or (not isinstance(first, torch.Tensor) and _same(values)):
        return first
    if isinstance(first, torch.Tensor) and first.dim() == 1 and first.numel() == like.shape[-1]:
        return _repeat_rows(torch.stack(values), rows_per_run)
    if isinstance(first, torch.Tensor) and first.dim() == 0:
        return _repeat_rows(torch.stack(values).to(like.dtype), rows_per_run).unsqueeze(-1)
    if isinstance(first, (int, float)) and not isinstance(first, bool):
        return _column([float(v) for v in values], rows_per_run, like.device, like.dtype)
    raise ValueError(f"cannot batch per-run values of type {type(first).__name__} and shape "
                     f"{getattr(first, 'shape', None)} across runs")


def merge_parts(parts: list, rows_per_run: list[int], like: torch.Tensor):
    """The runs' client procedures (equal up to numeric fields) as one procedure whose
    differing float fields are per-row columns."""
    first = parts[0]
    if _same(parts):
        return first
    if not dataclasses.is_dataclass(first) or any(type(p) is not type(first) for p in parts):
        raise ValueError(f"runs with different client parts ({type(first).__name__}) cannot share a batch")
    changes = {}
    for f in dataclasses.fields(first):
        values = [getattr(p, f.name) for p in parts]
        if _same(values):
            continue
        if isinstance(values[0], tuple):
            changes[f.name] = tuple(merge_parts(list(vs), rows_per_run, like) for vs in zip(*values))
        elif dataclasses.is_dataclass(values[0]):
            changes[f.name] = merge_parts(values, rows_per_run, like)
        else:
            changes[f.name] = merge_per_run(values, rows_per_run, like)
    return dataclasses.replace(first, **changes)


def concat_data(datas: list[FederatedData]) -> tuple[FederatedData, list[int]]:
    """The runs' training sets as one (identical sets are stored once) and each run's
    offset into it.  Only what local training reads is kept (no test set, no clients)."""
    unique: list[FederatedData] = []
    offsets_of: dict[int, int] = {}
    position = 0
    for data in datas:
        match = next((u for u in unique if u.train_x.shape == data.train_x.shape
                      and torch.equal(u.train_x, data.train_x) and torch.equal(u.train_y, data.train_y)), None)
        if match is None:
            unique.append(data)
            offsets_of[id(data)] = position
            position += data.train_x.shape[0]
        else:
            offsets_of[id(data)] = offsets_of[id(match)]
    first = datas[0]
    merged = FederatedData(
        train_x=torch.cat([u.train_x for u in unique]) if len(unique) > 1 else first.train_x,
        train_y=torch.cat([u.train_y for u in unique]) if len(unique) > 1 else first.train_y,
        test_x=first.test_x[:0], test_y=first.test_y[:0], client_indices=[],
        num_classes=first.num_classes, augment=first.augment, mean=first.mean, std=first.std)
    if len(unique) == 1 and "_prepared" in first.__dict__:  # the same set: share its prepared copy
        merged.__dict__["_prepared"] = first.__dict__["_prepared"]
    return merged, [offsets_of[id(d)] for d in datas]


def shift_plan(plan: ClientPlan, offset: int) -> ClientPlan:
    if offset == 0:
        return plan
    return dataclasses.replace(plan, batches=[b + offset for b in plan.batches])


# ----------------------------------------------------------------------------- the group

class MultiRunSimulation:
    """R simulations whose clients train as one batch per round (module docstring)."""

    def __init__(self, sims: list[Simulation], progress: bool = False, chunk_size: int | None = None,
                 description: str = ""):
        if not sims:
            raise ValueError("a group needs at least one run")
        self.sims = list(sims)
        self.device = sims[0].device
        self.progress = progress
        self.chunk_size = chunk_size
        self.description = description or f"{sims[0].cfg.method} x{len(sims)}"
        self.data, self.offsets = concat_data([s.data for s in sims])
        self.grad_fn = sims[0].flat.grad_fn(batched=sims[0].engine == "batched")
        self.weight_mask = sims[0].flat.weight_mask
        self.rows = [s.cfg.per_round for s in sims]
        self.client_update = merge_parts([s.client_update for s in sims], self.rows, sims[0].w)
        self.static_width = static_width(sims[0].cfg.batch_size, [max(s.data.client_sizes) for s in sims],
                                         "batched", self.device)

    # ------------------------------------------------------------------ local training
    def _plans(self, sim: Simulation, offset: int, round: int):
        cfg = sim.cfg
        clients = sample_clients(cfg.seed, round, sim.data.num_clients, cfg.per_round).tolist()
        indices = sim.data.host_client_indices()
        plans = [shift_plan(plan_client_round(cfg.seed, round, k, indices[k], cfg.batch_size,
                                              local_epochs_at(cfg, round), cfg.local_steps, sim.data.augment,
                                              cfg.mixup_alpha, cfg.cutout_size, sim.data.input_shape), offset)
                 for k in clients]
        return clients, plans

    def _train_rows(self, members, starts, broadcasts, round: int, plans_of, ids_of, draws: RoundDraws):
        """Local training of the clients of ``members`` (indices into ``self.sims``) from
        their runs' ``starts``; ``draws``: the round's draws of every member's clients, in
        member order.  Returns per member ``(uploads, state_rows)``."""
        rows = [len(plans_of[m]) for m in members]
        like = self.sims[members[0]].w
        start = _repeat_rows(torch.stack(starts), rows)
        global_model = _repeat_rows(torch.stack([self.sims[m].w for m in members]), rows)
        names = sorted({k for b in broadcasts for k in b})
        broadcast = {k: merge_per_run([b[k] for b in broadcasts], rows, like) for k in names}
        lr = merge_per_run([self.sims[m].client_lr(round) for m in members], rows, like)
        client_update = self.client_update if len(members) == len(self.sims) else \
            merge_parts([self.sims[m].client_update for m in members], rows, like)
        state = {name: torch.cat([self.sims[m].client_state[name][ids_of[m]] for m in members])
                 for name in self.sims[members[0]].client_state}
        total = len(draws)
        while True:
            size = self.chunk_size or total
            try:
                outputs = []
                with precision_mode(self.sims[0].cfg.precision, self.device):
                    for lo in range(0, total, size):
                        hi = min(lo + size, total)
                        outputs.append(train_chunk(
                            _slice_parts(client_update, lo, hi, total), self.data, start[lo:hi],
                            draws.rows(lo, hi), round, _rows(lr, lo, hi, total), self.grad_fn,
                            {n: t[lo:hi] for n, t in state.items()},
                            {k: _rows(v, lo, hi, total) for k, v in broadcast.items()},
                            global_model[lo:hi], self.weight_mask))
                break
            except torch.cuda.OutOfMemoryError:
                if size <= 1:
                    raise
                self.chunk_size = size // 2
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                print(f"flcore: {size} clients at once do not fit in {self.device} memory; "
                      f"training {self.chunk_size} at a time", file=sys.stderr)
        uploads = {k: torch.cat([o[k] for o in outputs]) for k in outputs[0] if k != "client_state"}
        new_state = {n: torch.cat([o["client_state"][n] for o in outputs]) for n in outputs[0]["client_state"]}
        results, lo = [], 0
        for r in rows:
            results.append(({k: v[lo:lo + r] for k, v in uploads.items()},
                            {n: t[lo:lo + r] for n, t in new_state.items()}))
            lo += r
        return results

    def train_round(self, members: list[int], round: int) -> dict[int, torch.Tensor]:
        """Round ``round`` of the runs ``members``; returns each one's mean training loss."""
        plans_of, ids_of = {}, {}
        for m in members:
            clients, plans_of[m] = self._plans(self.sims[m], self.offsets[m], round)
        draws = stack_plans([p for m in members for p in plans_of[m]], self.device, self.sims[members[0]].w.dtype,
                            self.static_width)  # the round's one transfer
        lo = 0
        for m in members:
            ids_of[m] = draws.client_ids[lo:lo + len(plans_of[m])]
            lo += len(plans_of[m])
        if self.sims[members[0]].server.needs_probe:
            probes = self._train_rows(members, [self.sims[m].w for m in members], [{} for _ in members],
                                      round, plans_of, ids_of, draws)
            for m, (uploads, _) in zip(members, probes):
                sim = self.sims[m]
                sim.server.probe(sim.w, uploads, sim.client_sizes[ids_of[m]], sim.server_state, round,
                                 sim.data.num_clients)
        sent = [self.sims[m].server.broadcast(self.sims[m].w, self.sims[m].server_state, round) for m in members]
        results = self._train_rows(members, [s for s, _ in sent], [b for _, b in sent], round, plans_of, ids_of,
                                   draws)
        losses = {}
        for m, (start, _), (uploads, state_rows) in zip(members, sent, results):
            sim, ids = self.sims[m], ids_of[m]
            for name, rows in state_rows.items():
                sim.client_state[name][ids] = rows
            sim.w = sim.server.update(sim.w, start, uploads, sim.client_sizes[ids], sim.server_state,
                                      round, sim.data.num_clients)
            losses[m] = uploads["train_loss"].mean()
        return losses

    # ------------------------------------------------------------------ the loop
    def run_rounds(self) -> list[dict]:
        """Train every run of the group to its end (resuming each from its checkpoint);
        returns their summaries in order."""
        tracks = [_RunTrack(sim) for sim in self.sims]
        for t in tracks:
            t.batch_runs = len(tracks)
        rounds = max(stop_round(sim.cfg) for sim in self.sims)
        first = min(sim.rounds_done for sim in self.sims)
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=rounds, initial=first, unit="round", file=sys.stderr, dynamic_ncols=True,
                       desc=self.description)
        started = time.perf_counter()
        try:
            for round in range(first, rounds):
                members = [m for m, t in enumerate(tracks) if t.open and self.sims[m].rounds_done == round]
                if members:
                    round_started = time.perf_counter()
                    losses = self.train_round(members, round)
                    if self.device.type == "cuda":
                        torch.cuda.synchronize(self.device)
                    share = (time.perf_counter() - round_started) / len(members)
                    for m in members:
                        tracks[m].timing.add(share)
                        tracks[m].after_round(round, losses[m])
                if bar is not None:
                    bar.update(1)
        except KeyboardInterrupt:
            for t in tracks:
                t.interrupted()
            raise
        finally:
            if bar is not None:
                bar.close()
        elapsed = time.perf_counter() - started
        return [t.finish(elapsed) for t in tracks]


def _slice_parts(part, lo: int, hi: int, total: int):
    """A merged client procedure restricted to rows ``lo:hi`` (its per-row columns cut)."""
    if lo == 0 and hi == total:
        return part
    if isinstance(part, tuple):
        return tuple(_slice_parts(p, lo, hi, total) for p in part)
    if not dataclasses.is_dataclass(part):
        return part
    changes = {}
    for f in dataclasses.fields(part):
        value = getattr(part, f.name)
        if isinstance(value, torch.Tensor) and value.dim() == 2 and value.shape == (total, 1):
            changes[f.name] = value[lo:hi]
        elif isinstance(value, tuple) or dataclasses.is_dataclass(value):
            changes[f.name] = _slice_parts(value, lo, hi, total)
    return dataclasses.replace(part, **changes) if changes else part


def _rows(value, lo: int, hi: int, total: int):
    """Rows ``lo:hi`` of a merged per-row value (values shared by all rows pass as they are)."""
    if isinstance(value, torch.Tensor) and value.dim() >= 1 and value.shape[0] == total:
        return value[lo:hi]
    return value


class _RunTrack:
    """The per-run side of a group: resume, metrics rows, checkpoints, divergence and the
    summary, as :meth:`Simulation.run_rounds` keeps them for a run alone."""

    def __init__(self, sim: Simulation):
        self.sim = sim
        self.open = True
        self.status, self.diverged_round = "finished", None
        #: each round's training time shared equally by the runs trained in it
        self.timing = RoundTiming()
        sim.open_record("batched-runs")
        self.stop = stop_round(sim.cfg)
        self.open = sim.rounds_done < self.stop

    def _append(self, row: dict) -> None:
        self.sim.metrics.append(row)
        if self.sim.run is not None:
            self.sim.run.append_metrics(row)

    def after_round(self, round: int, train_loss: torch.Tensor) -> None:
        sim, cfg, run = self.sim, self.sim.cfg, self.sim.run
        done = round + 1
        sim.rounds_done = done
        if not (bool(torch.isfinite(train_loss)) and bool(torch.isfinite(sim.w).all())):
            self.status, self.diverged_round, self.open = "diverged", done, False
            self._append({"round": done, "train_loss": float(train_loss), "test_accuracy": None, "test_loss": None})
            return
        if is_evaluation_round(done, cfg):
            acc, loss = sim.evaluate()
            row: dict[str, Any] = {"round": done, "train_loss": float(train_loss), "test_accuracy": acc,
                                   "test_loss": loss, "lr": sim.client_lr(round)}
            if done % cfg.eval_every == 0 or done == cfg.rounds:
                row["client_accuracy"] = sim.client_accuracy()
            self._append(row)
        if run is not None and done % cfg.checkpoint_every == 0 and done < self.stop:
            run.save_checkpoint(sim.state())
            run.set_status("running", rounds_done=done)
        if done >= self.stop:
            self.open = False

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
            if self.status in ("finished", CAPPED):
                run.save_final_model(sim.flat.state_dict(sim.server.eval_params(sim.w, sim.server_state)))
            run.write_summary(summary)
            run.set_status(self.status, rounds_done=sim.rounds_done, diverged_round=self.diverged_round,
                           wall_time_s=elapsed, **self.timing.record(), batch_runs=self.batch_runs,
                           **({"rounds": sim.cfg.rounds} if self.status == CAPPED else {}))
        summary["wall_time_s"] = elapsed
        return summary


def run_group(cfgs: list, device: torch.device, create_run=None, progress: bool = False,
              chunk_size: int | None = None, description: str = "", callbacks_for=None) -> list[dict]:
    """Train the runs of ``cfgs`` (one group, see :func:`group_key`) together; returns
    their summaries in order.  ``create_run(cfg)`` gives each run's record
    (:class:`flcore.store.Run`), called once every run's data is loaded, so missing data
    fails before any record exists; None records nothing.  A group of one run is
    trained by :class:`Simulation` itself, as ``flcore run`` would.  ``callbacks_for(sim)``
    gives each simulation's callbacks (the probes and snapshots its config records,
    :func:`flcore.analysis.recording.recording_callbacks`); None adds none."""
    keys = {group_key(cfg) for cfg in cfgs}
    if len(keys) > 1:
        raise ValueError("these runs differ in more than seed, partition and column hyper-parameters; "
                         "plan them into groups with flcore.planning.plan_groups")
    datas: dict = {}
    for cfg in cfgs:
        if _data_key(cfg) not in datas:
            datas[_data_key(cfg)] = build_federated_data(cfg, device)
    sims = [Simulation(cfg, datas[_data_key(cfg)], device, None if create_run is None else create_run(cfg),
                       chunk_size=chunk_size)
            for cfg in cfgs]
    if callbacks_for is not None:
        for sim in sims:
            sim.add_callbacks(callbacks_for(sim))
    if len(sims) == 1:
        sims[0].progress = progress
        return [sims[0].run_rounds()]
    return MultiRunSimulation(sims, progress=progress, chunk_size=chunk_size, description=description).run_rounds()


def _data_key(cfg) -> tuple:
    """What a run's federated data depends on (its partition draws on the seed)."""
    return (cfg.dataset, cfg.data_root, cfg.num_samples, cfg.seed, cfg.partition,
            tuple(sorted(cfg.partition_args().items())), cfg.clients)
