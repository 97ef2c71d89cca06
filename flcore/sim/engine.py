"""The round loop: sample clients -> local training -> server step -> evaluate.

A :class:`Simulation` owns the global model as a flat vector, the server optimizer state
and the run record.  It checkpoints every ``checkpoint_every`` rounds (atomically, through
the run store) and resumes from the last checkpoint: since every random draw is derived
from ``(seed, purpose, round, client)``, a resumed run repeats exactly the rounds an
uninterrupted run would have done.  A NaN or infinite training loss or model ends the run
with status ``diverged`` and the round it happened in.
"""
from __future__ import annotations

import math
import sys
import time

import torch

from ..algorithms import aggregate, get_method
from ..flat import FlatModel
from ..models import build_model
from ..seeding import derive_seed
from .cpu_memory import retain_freed_memory
from .local_training import train_round
from .sampling import plan_client_round, sample_clients

CHECKPOINT_FORMAT = 2


def resolve_device(name: str) -> torch.device:
    """``auto`` picks CUDA when available; an unavailable device is a config error."""
    from ..errors import ConfigError

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise ConfigError("device", f"got {name!r} but CUDA is not available here; allowed values: cpu, auto")
    if name == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("device", "got 'mps' but MPS is not available here; allowed values: cpu, auto")
    return torch.device(name)


def resolve_engine(name: str, device: torch.device) -> str:
    """``auto``: batched clients on accelerators, one client at a time on CPUs.

    On a 2-core CPU the loop beats ``vmap`` for every model flcore has (the paper's CNN:
    0.84 s against 1.50 s per FedAvg round, ``benchmarks/round_time.py --engine
    sequential,batched``); on a GPU, batching the clients' many small steps is the main
    speed lever (design guide sections 4 and 10).  ``torch.compile`` is not applied: on
    the CPU it made the CNN's training step about 20% slower (0.76 s -> 0.91 s per FedAvg
    round), and its effect on GPUs is still to be measured.
    """
    if name != "auto":
        return name
    return "sequential" if device.type == "cpu" else "batched"


def build_initial_model(cfg, input_shape, num_classes, device):
    """The template module and the initial flat parameters, drawn on the CPU from the
    ``(seed, "init")`` generator so CPU and GPU runs start from the same model."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(cfg.seed, "init"))
        module = build_model(cfg.model, input_shape, num_classes)
    module = module.to(device)
    flat = FlatModel(module)
    return flat, flat.flatten()


def is_evaluation_round(done: int, cfg) -> bool:
    """Evaluate every ``eval_every`` rounds, every round of the last ``eval_last`` and
    after the final round (the FedSAM paper's protocol: every 100, then every round of the
    last 100, whose mean is reported)."""
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


def init_client_state(spec: dict[str, str], w: torch.Tensor, num_clients: int) -> dict[str, torch.Tensor]:
    """Per-client state tables, one row per client, kept across rounds (a client that
    returns after many rounds finds its own row).  Initialisers: ``zeros`` (a zero vector
    like the model), ``model`` (a copy of w^0), ``flag`` (False), ``round`` (-1)."""
    tables = {}
    for name, kind in spec.items():
        if kind == "zeros":
            tables[name] = torch.zeros(num_clients, w.numel(), dtype=w.dtype, device=w.device)
        elif kind == "model":
            tables[name] = w.detach().unsqueeze(0).repeat(num_clients, 1)
        elif kind == "flag":
            tables[name] = torch.zeros(num_clients, dtype=torch.bool, device=w.device)
        elif kind == "round":
            tables[name] = torch.full((num_clients,), -1, dtype=torch.long, device=w.device)
        else:
            raise ValueError(f"unknown client state initialiser {kind!r} for {name!r}")
    return tables


def _to_device(tree, device):
    if isinstance(tree, dict):
        return {k: _to_device(v, device) for k, v in tree.items()}
    if isinstance(tree, torch.Tensor):
        return tree.detach().to(device)
    return tree


class Simulation:
    def __init__(self, cfg, data, device: torch.device, run, progress: bool = False,
                 chunk_size: int | None = None, callbacks: tuple = ()):
        self.cfg = cfg
        self.data = data
        self.device = device
        self.run = run
        self.progress = progress
        self.chunk_size = chunk_size
        self.engine = resolve_engine(cfg.engine, device)
        if device.type == "cpu":
            retain_freed_memory()  # reuse freed activation memory instead of faulting it in anew
        self.method = get_method(cfg.method)
        self.flat, self.w = build_initial_model(cfg, data.input_shape, data.num_classes, device)
        self.client_update = self.method.build_client(cfg, self.flat)
        self.server = self.method.build_server(cfg)
        self.schedule = self.method.build_schedule(cfg)
        self.server_state = self.server.init(self.w, data.num_clients)
        self.client_state = init_client_state(self.client_update.client_state_spec(), self.w, data.num_clients)
        self.client_sizes = torch.tensor(data.client_sizes, device=device)
        self.rounds_done = 0
        #: objects with ``on_round_end(round_done, sim_state) -> dict`` (e.g.
        #: ``flcore.analysis.ProbeCallback``); their values go into the metrics log.
        self.callbacks = tuple(callbacks)
        self._last_round: dict = {}
        self._prev_pseudo_grad = None

    # ------------------------------------------------------------------ state
    def state(self) -> dict:
        return {
            "format": CHECKPOINT_FORMAT,
            "rounds_done": self.rounds_done,
            "w": self.w.detach().cpu(),
            "server_state": _to_device(self.server_state, "cpu"),
            "client_state": _to_device(self.client_state, "cpu"),
        }

    def load_state(self, state: dict) -> None:
        if state.get("format") != CHECKPOINT_FORMAT:
            raise RuntimeError(f"checkpoint format {state.get('format')} is not {CHECKPOINT_FORMAT}")
        self.rounds_done = int(state["rounds_done"])
        self.w = state["w"].to(self.device)
        self.server_state = _to_device(state["server_state"], self.device)
        self.client_state = _to_device(state["client_state"], self.device)

    # ------------------------------------------------------------------ one round
    def client_lr(self, round: int) -> float:
        return float(self.schedule(round))

    def local_training(self, start: torch.Tensor, plans, round: int, broadcast: dict):
        """Local training of the clients of ``plans`` from ``start``.

        With the batched engine, a round whose clients do not fit in the device's memory
        together is retried with half as many clients per computation (down to one), and
        later rounds keep the smaller chunk: local training is a pure function of its
        inputs (the client-state rows it updates are returned, not written), so a retried
        round gives what an unconstrained one would.
        """
        while True:
            try:
                return train_round(self.client_update, self.data, start, plans, round, self.client_lr(round),
                                   self.flat, self.engine, self.chunk_size, self.client_state, broadcast,
                                   global_model=self.w)
            except torch.cuda.OutOfMemoryError:
                size = self.chunk_size or len(plans)
                if self.engine != "batched" or size <= 1:
                    raise
                self.chunk_size = size // 2
                if self.device.type == "cuda":
                    torch.cuda.empty_cache()
                print(f"flcore: {size} clients at once do not fit in {self.device} memory; "
                      f"training {self.chunk_size} at a time", file=sys.stderr)

    def train_one_round(self, round: int) -> torch.Tensor:
        """Run round ``round`` (0-based); returns the clients' mean training loss (on device)."""
        cfg = self.cfg
        clients = sample_clients(cfg.seed, round, self.data.num_clients, cfg.per_round).tolist()
        plans = [
            plan_client_round(cfg.seed, round, k, self.data.client_indices[k], cfg.batch_size,
                              cfg.local_epochs, cfg.local_steps, self.data.augment,
                              cfg.mixup_alpha, cfg.cutout_size, self.data.input_shape)
            for k in clients
        ]
        ids = torch.tensor(clients, device=self.device)
        if self.server.needs_probe:
            # a first exchange from w^t whose client-state updates are discarded
            probe, _ = self.local_training(self.w, plans, round, {})
            self.server.probe(self.w, probe, self.client_sizes[ids], self.server_state, round,
                              self.data.num_clients)
        start, broadcast = self.server.broadcast(self.w, self.server_state, round)
        uploads, state_rows = self.local_training(start, plans, round, broadcast)
        for name, rows in state_rows.items():
            self.client_state[name][ids] = rows
        w_before = self.w
        self.w = self.server.update(self.w, start, uploads, self.client_sizes[ids], self.server_state,
                                    round, self.data.num_clients)
        if self.callbacks:
            pseudo_grad = start - aggregate(uploads["model"], self.client_sizes[ids])
            self._last_round = {
                "round": round + 1, "w": self.w, "w_prev": w_before, "start": start,
                "client_models": uploads["model"], "client_ids": ids, "pseudo_grad": pseudo_grad,
                "prev_pseudo_grad": self._prev_pseudo_grad, "server_state": self.server_state,
                "flat": self.flat, "data": self.data,
            }
            self._prev_pseudo_grad = pseudo_grad
        return uploads["train_loss"].mean()

    def run_callbacks(self, done: int) -> dict:
        """Values of the callbacks due after round ``done`` (keys with a None value, such as
        the previous pseudo-gradient of round one, are left out of ``sim_state``)."""
        state = {k: v for k, v in self._last_round.items() if v is not None}
        out: dict = {}
        for callback in self.callbacks:
            out.update(callback.on_round_end(done, state))
        return out

    def client_accuracy(self) -> list[float]:
        """Accuracy of the evaluated global model on each client's training data (the
        FedSAM paper's Fig. 3), from one batched pass over the training set."""
        w_eval = self.server.eval_params(self.w, self.server_state)
        if not hasattr(self, "_owner"):
            self._owner = self.data.client_of_sample()
        correct = self.flat.correct(w_eval, self.data.eval_train_inputs(), self.data.train_y,
                                    self.cfg.eval_batch_size)
        owned = self._owner >= 0
        sums = torch.zeros(self.data.num_clients, dtype=torch.float64, device=self.device)
        sums.index_add_(0, self._owner[owned], correct[owned].double())
        return (sums / self.client_sizes.clamp_min(1)).tolist()

    def evaluate(self) -> tuple[float, float]:
        w_eval = self.server.eval_params(self.w, self.server_state)
        acc, loss = self.flat.evaluate(w_eval, self.data.test_x, self.data.test_y, self.cfg.eval_batch_size)
        return float(acc), float(loss)

    # ------------------------------------------------------------------ the loop
    def run_rounds(self) -> dict:
        cfg, run = self.cfg, self.run
        checkpoint = run.load_checkpoint(map_location=self.device) if run is not None else None
        if checkpoint is not None:
            self.load_state(checkpoint)
        self.metrics = []
        if run is not None:
            run.truncate_metrics(self.rounds_done)
            self.metrics = run.read_metrics()
            run.set_status("running", rounds_done=self.rounds_done, device=str(self.device), engine=self.engine)
        bar = None
        if self.progress:
            from tqdm import tqdm

            bar = tqdm(total=cfg.rounds, initial=self.rounds_done, unit="round", file=sys.stderr,
                       dynamic_ncols=True, desc=f"{cfg.method}/{cfg.dataset}")
        status, diverged_round = "finished", None
        started = time.perf_counter()
        try:
            for round in range(self.rounds_done, cfg.rounds):
                train_loss = self.train_one_round(round)
                done = round + 1
                finite = bool(torch.isfinite(train_loss)) and bool(torch.isfinite(self.w).all())
                self.rounds_done = done
                if not finite:
                    status, diverged_round = "diverged", done
                    row = {"round": done, "train_loss": float(train_loss), "test_accuracy": None, "test_loss": None}
                    self.metrics.append(row)
                    if run is not None:
                        run.append_metrics(row)
                    break
                probed = self.run_callbacks(done) if self.callbacks else {}
                if probed and not is_evaluation_round(done, cfg):
                    row = {"round": done, "train_loss": float(train_loss), **probed}
                    self.metrics.append(row)
                    if run is not None:
                        run.append_metrics(row)
                if is_evaluation_round(done, cfg):
                    acc, loss = self.evaluate()
                    row = {"round": done, "train_loss": float(train_loss), "test_accuracy": acc,
                           "test_loss": loss, "lr": self.client_lr(round)}
                    if done % cfg.eval_every == 0 or done == cfg.rounds:
                        row["client_accuracy"] = self.client_accuracy()
                    row.update(probed)
                    self.metrics.append(row)
                    if run is not None:
                        run.append_metrics(row)
                    if bar is not None:
                        bar.set_postfix(test_acc=f"{acc:.4f}")
                if run is not None and done % cfg.checkpoint_every == 0 and done < cfg.rounds:
                    run.save_checkpoint(self.state())
                    run.set_status("running", rounds_done=done)
                if bar is not None:
                    bar.update(1)
        except KeyboardInterrupt:
            if run is not None:
                run.set_status("interrupted", rounds_done=self.rounds_done)
            raise
        finally:
            if bar is not None:
                bar.close()
        elapsed = time.perf_counter() - started
        summary = summarize(self.metrics, cfg, status, self.rounds_done)
        if diverged_round is not None:
            summary["diverged_round"] = diverged_round
        if run is not None:
            run.save_checkpoint(self.state())
            if status == "finished":
                run.save_final_model(self.flat.state_dict(self.server.eval_params(self.w, self.server_state)))
            run.write_summary(summary)
            run.set_status(status, rounds_done=self.rounds_done, diverged_round=diverged_round,
                           wall_time_s=elapsed)
        summary["wall_time_s"] = elapsed
        return summary
