"""A simulation of one run: its global model, server state and record, over the round driver.

A :class:`Simulation` owns the global model as a flat vector, the server optimizer state
and the run record.  It checkpoints every ``checkpoint_every`` rounds (atomically, through
the run store) and resumes from the last checkpoint: since every random draw is derived
from ``(seed, purpose, round, client)``, a resumed run repeats exactly the rounds an
uninterrupted run would have done.  A NaN or infinite training loss or model ends the run
with status ``diverged`` and the round it happened in.

The same object is the round-level research API: :meth:`Simulation.from_config` (with a
named dataset, or your own data and ``nn.Module``), :meth:`Simulation.step` returning a
:class:`RoundResult` (what the server sent, what each client uploaded, the state after
the round by name), :meth:`Simulation.state_dict` / :meth:`Simulation.load_state_dict`.
``run_rounds`` (what :func:`flcore.run_experiment` calls) runs the same rounds with
evaluation, checkpoints and the run record.  Both go through the round driver
(:mod:`flcore.sim.round_driver`) as a group of one run: the code that trains a planned
group of runs together.

A config's ``max_rounds`` caps the rounds trained now: the run stops at that round with
status ``capped`` (checkpoint, summary and an evaluation there, marked as a preview), keeps
its run id, and a later call with a higher cap or none continues it from the checkpoint;
the continued run's log and model are the uninterrupted run's.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

import torch
from torch import nn

from flcore.algorithms import aggregate, get_method
from flcore.algorithms.schedules import local_epochs_at
from flcore.config import ExperimentConfig, resolve_config
from flcore.devices import resolve_device
from flcore.errors import ConfigError
from flcore.flat import FlatModel
from flcore.models import build_model
from flcore.record_format import CHECKPOINT_FORMAT, is_preview_round
from flcore.seeding import derive_seed
from flcore.sim.cpu_memory import retain_freed_memory
from flcore.sim.cuda_graphs import StepGraphs
from flcore.sim.federated_data import build_federated_data
from flcore.sim.precision import precision_mode
from flcore.sim.round_draws import RoundDraws, stack_plans, static_width
from flcore.sim.round_driver import RoundDriver
from flcore.sim.row_engine import ROW_KERNEL_MODELS, evaluate_rows
from flcore.sim.sampling import plan_client_round, sample_clients
from flcore.tensor_tree import to_device


def resolve_engine(name: str, device: torch.device, model: str | None = None) -> str:
    """``auto``: batched clients on accelerators; on a CPU, the row kernel's batched
    matmuls (``rows``, :mod:`flcore.sim.row_engine`) for the models of
    :data:`~flcore.sim.row_engine.ROW_KERNEL_MODELS` and one client at a time for the
    others (``model``: the config's model name; None, a model the caller built, counts as
    another).

    On a GPU, batching the clients' many small steps is the main speed lever (docs/design.md
    sections 4 and 10).  On a CPU ``vmap``'s grouped convolutions lose to a loop for the
    image models (the paper's CNN: 0.84 s against 1.50 s per FedAvg round), while the
    MNIST-1D networks' rows as batched matmuls take a fifth of the loop's time per client
    step (``benchmarks/book_throughput.py``).  ``torch.compile`` is not applied: on the CPU
    it made the CNN's training step about 20% slower (0.76 s -> 0.91 s per FedAvg round).
    """
    if name != "auto":
        return name
    if device.type != "cpu":
        return "batched"
    return "rows" if model in ROW_KERNEL_MODELS else "sequential"


def build_initial_model(cfg, input_shape, num_classes, device):
    """The template module and the initial flat parameters, drawn on the CPU from the
    ``(seed, "init")`` generator so CPU and GPU runs start from the same model."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(derive_seed(cfg.seed, "init"))
        module = build_model(cfg.model, input_shape, num_classes)
    module = module.to(device)
    flat = FlatModel(module)
    return flat, flat.flatten()


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


def client_round_plan(cfg, data, round: int, client: int):
    """Client ``client``'s :class:`~flcore.sim.ClientPlan` of round ``round`` under ``cfg``
    on ``data``: what :meth:`Simulation.plan_round` gives it, computed by the client alone
    (every draw comes from ``(seed, purpose, round, client)``), as a client that trains
    somewhere else (``flcore.flower``) needs; drawn from the host copy of its indices."""
    return plan_client_round(cfg.seed, round, client, data.host_client_indices()[client], cfg.batch_size,
                             local_epochs_at(cfg, round), cfg.local_steps, data.augment, cfg.mixup_alpha,
                             cfg.cutout_size, data.input_shape)


def flatten_state(tree: dict, prefix: str = "") -> dict[str, torch.Tensor]:
    """A nested state dict as ``{"part.name": tensor}`` (e.g. ``fedgf.c``, ``step.opt.m``),
    the names ``flcore methods --json`` lists; tensors are detached copies."""
    out: dict[str, torch.Tensor] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten_state(value, f"{name}."))
        elif isinstance(value, torch.Tensor):
            out[name] = value.detach().clone()
    return out


@dataclass
class RoundResult:
    """What one round did, as :meth:`Simulation.step` returns it.

    ``round`` is the 0-based index ``t`` of the round that ran (the model after it is
    ``w^{t+1}``); ``client_ids`` the sampled clients in training order; ``start`` the
    point every client of the round started from (``w^t``, or FedGloSS's perturbed
    ``w~^t``; ``[P]``) and ``broadcast`` the other vectors the server sent with it;
    ``batches[k][j]`` the global training-sample indices of client ``k``'s step ``j``;
    ``uploads`` what the clients sent back (``model`` ``[K, P]`` and any extra vectors,
    ``[K, ...]``); ``train_loss`` ``[K]``; ``global_model`` ``w^{t+1}`` ``[P]`` and
    ``eval_model`` the model evaluated (SWA's average once it exists, else
    ``global_model``); ``server_state`` and ``client_state`` the state after the round
    as named tensors (client tables have one row per client, ``[N, ...]``).
    """

    round: int
    client_ids: list[int]
    start: torch.Tensor
    broadcast: dict[str, torch.Tensor]
    batches: list[list[torch.Tensor]]
    uploads: dict[str, torch.Tensor]
    train_loss: torch.Tensor
    global_model: torch.Tensor
    eval_model: torch.Tensor
    server_state: dict[str, torch.Tensor] = field(default_factory=dict)
    client_state: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def client_models(self) -> torch.Tensor:
        """The clients' uploaded models ``[K, P]``."""
        return self.uploads["model"]


def _clone_tree(tree):
    if isinstance(tree, dict):
        return {k: _clone_tree(v) for k, v in tree.items()}
    if isinstance(tree, torch.Tensor):
        return tree.detach().clone()
    return tree


def flat_model_of(module: nn.Module, device: torch.device) -> tuple[FlatModel, torch.Tensor]:
    """A user's module as the template of a :class:`FlatModel` (a copy, moved to
    ``device``) and its current parameters as the initial flat vector (in the order of
    ``named_parameters``)."""
    if not isinstance(module, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(module).__name__}")
    if not any(True for _ in module.parameters()):
        raise ValueError("model has no parameters to train")
    template = copy.deepcopy(module).to(device)
    flat = FlatModel(template)
    return flat, flat.flatten()


class Simulation:
    """A federated simulation driven round by round.

    Build it with :meth:`from_config` (a named dataset, or your own
    :class:`~flcore.FederatedData` and ``nn.Module``); :meth:`step` runs one round and
    returns a :class:`RoundResult`; :meth:`state_dict` / :meth:`load_state_dict` save and
    restore everything a later round depends on; :meth:`run_rounds` runs the remaining
    rounds with evaluation, checkpoints and the run record (what
    :func:`flcore.run_experiment` does).
    """

    def __init__(self, cfg, data, device: torch.device, run, progress: bool = False,
                 chunk_size: int | None = None, callbacks: tuple = (), model: nn.Module | None = None):
        self.cfg = cfg
        self.data = data
        self.device = device
        self.run = run
        self.progress = progress
        self.engine = resolve_engine(cfg.engine, device, cfg.model if model is None else None)
        if device.type == "cpu":
            retain_freed_memory()  # reuse freed activation memory instead of faulting it in anew
        self.method = get_method(cfg.method)
        if model is None:
            self.flat, self.w = build_initial_model(cfg, data.input_shape, data.num_classes, device)
        else:
            self.flat, self.w = flat_model_of(model, device)
            if not data.pixels and self.w.dtype != data.train_x.dtype:
                raise ValueError(f"model: parameters are {self.w.dtype} but the data's inputs are "
                                 f"{data.train_x.dtype}; convert one (e.g. model.double() or x.float())")
        self.client_update = self.method.build_client(cfg, self.flat)
        self.server = self.method.build_server(cfg)
        self.schedule = self.method.build_schedule(cfg)
        self.server_state = self.server.init(self.w, data.num_clients)
        self.client_state = init_client_state(self.client_update.client_state_spec(), self.w, data.num_clients)
        self.client_sizes = torch.tensor(data.client_sizes, device=device)
        self.static_width = static_width(cfg.batch_size, data.client_sizes, self.engine, device)
        #: the batched local step as CUDA graphs where it applies (``flcore.sim.cuda_graphs``)
        self.step_graphs = StepGraphs() if device.type == "cuda" and self.engine == "batched" else None
        self.rounds_done = 0
        #: objects with ``on_round_end(round_done, sim_state) -> dict`` (e.g.
        #: ``flcore.analysis.ProbeCallback``); their values go into the metrics log.  The
        #: probes and snapshots a config asks for (``probes``, ``snapshot_rounds``) are
        #: added by whoever records the run (:func:`flcore.run_experiment`, the planner) with
        #: :meth:`add_callbacks` and :func:`flcore.analysis.recording.recording_callbacks`.
        self.callbacks = tuple(callbacks)
        self._last_round: dict = {}
        self._prev_pseudo_grad = None
        #: trains this run as a group of one (:mod:`flcore.sim.round_driver`)
        self.driver = RoundDriver([self], chunk_size=chunk_size)

    @property
    def chunk_size(self) -> int | None:
        """Clients per local-training computation (None: the whole round); halved by the
        driver when a round does not fit in the device's memory."""
        return self.driver.chunk_size

    @chunk_size.setter
    def chunk_size(self, size: int | None) -> None:
        self.driver.chunk_size = size

    def add_callbacks(self, callbacks) -> None:
        """Append callbacks (objects with ``on_round_end(round_done, sim_state) -> dict``)."""
        self.callbacks += tuple(callbacks)

    @classmethod
    def from_config(cls, config=None, data=None, model: nn.Module | None = None, device: str | None = None,
                    run=None, progress: bool = False, chunk_size: int | None = None,
                    callbacks: tuple = ()) -> Simulation:
        """A simulation of ``config`` (an :class:`~flcore.ExperimentConfig`, or a
        dict of config fields resolved with :func:`~flcore.resolve_config`).

        Fields a dict does not give take flcore's defaults (the ``small`` scale's unless
        ``scale`` is given); with your own data, ``dataset``, ``model`` and the partition
        fields of the config are not used.
        ``data`` (a :class:`~flcore.FederatedData`, e.g. from
        :meth:`flcore.FederatedData.from_tensors`) replaces the config's named dataset: its
        clients are the simulation's (``clients`` is set from it, and a different value
        given in ``config`` is an error).  ``model`` (any ``torch.nn.Module`` without
        buffers) replaces the config's named model; its current parameters are ``w^0``.
        ``device`` overrides the config's.  ``run`` is a record to write the run into (a
        :class:`flcore.store.Run` created for this config's run id), only when both data and
        model are the config's own (a run id does not describe your tensors);
        :func:`flcore.run_experiment` does that, with locking and resume, for a run store.
        """
        values = config if isinstance(config, (dict, type(None))) else None
        if values is not None:
            values = dict(values or {})
            if data is not None:
                given = values.get("clients")
                if given is not None and int(given) != data.num_clients:
                    raise ConfigError("clients", f"got {given!r} but data has {data.num_clients} clients")
                values["clients"] = data.num_clients
            if device is not None:
                values["device"] = device
            cfg = resolve_config(values)
        elif isinstance(config, ExperimentConfig):
            cfg = config
            changes = {}
            if data is not None and cfg.clients != data.num_clients:
                changes["clients"] = data.num_clients
            if device is not None:
                changes["device"] = device
            cfg = cfg.replace(**changes) if changes else cfg
        else:
            raise TypeError(f"config must be an ExperimentConfig or a dict, got {type(config).__name__}")
        dev = resolve_device(cfg.device)
        custom = data is not None or model is not None
        if run is not None and custom:
            raise ValueError("run: a run record holds runs of named datasets and models only; "
                             "pass run=None with your own data or model")
        data = build_federated_data(cfg, dev) if data is None else data.to(dev)
        return cls(cfg, data, dev, run, progress=progress, chunk_size=chunk_size, callbacks=callbacks,
                   model=model)

    # ------------------------------------------------------------------ state
    def state_dict(self) -> dict:
        """Everything later rounds depend on: the round counter, ``w``, the server state
        and the per-client state (on the CPU).  Every random draw is derived from
        ``(seed, purpose, round, client)``, so no generator state is needed: a simulation
        loaded with this state runs the next rounds exactly as this one would.  The
        tensors are copies: later rounds of this simulation do not change them."""
        return _clone_tree(self.state())

    def load_state_dict(self, state: dict) -> None:
        """Restore a state from :meth:`state_dict` (of a simulation of the same config,
        data and model)."""
        if state.get("w") is None or state["w"].shape != self.w.shape:
            raise ValueError(
                f"state holds a model of shape {tuple(state['w'].shape) if state.get('w') is not None else None}; "
                f"this simulation's has {tuple(self.w.shape)}"
            )
        self.load_state(_clone_tree(state))

    def state(self) -> dict:
        return {
            "format": CHECKPOINT_FORMAT,
            "rounds_done": self.rounds_done,
            "w": self.w.detach().cpu(),
            "server_state": to_device(self.server_state, "cpu"),
            "client_state": to_device(self.client_state, "cpu"),
        }

    def load_state(self, state: dict) -> None:
        if state.get("format") != CHECKPOINT_FORMAT:
            raise RuntimeError(f"checkpoint format {state.get('format')} is not {CHECKPOINT_FORMAT}")
        self.rounds_done = int(state["rounds_done"])
        self.w = state["w"].to(self.device)
        self.server_state = to_device(state["server_state"], self.device)
        self.client_state = to_device(state["client_state"], self.device)

    # ------------------------------------------------------------------ one round
    def client_lr(self, round: int) -> float:
        return float(self.schedule(round))

    def plan_round(self, round: int) -> tuple[list[int], list]:
        """The clients sampled in round ``round`` and their batch plans
        (:class:`~flcore.sim.ClientPlan`: global sample indices of every step), drawn on
        the host from host data only."""
        cfg = self.cfg
        clients = sample_clients(cfg.seed, round, self.data.num_clients, cfg.per_round).tolist()
        return clients, [client_round_plan(cfg, self.data, round, k) for k in clients]

    def draw_round(self, round: int) -> tuple[list[int], list, RoundDraws]:
        """Round ``round``'s clients, their plans and every draw of the round on the
        device, sent there in one transfer (:func:`~flcore.sim.round_draws.stack_plans`):
        the only host-to-device copy of the round."""
        clients, plans = self.plan_round(round)
        return clients, plans, stack_plans(plans, self.device, self.w.dtype, self.static_width)

    def train_one_round(self, round: int) -> torch.Tensor:
        """Run round ``round`` (0-based); returns the clients' mean training loss (on device)."""
        return self._run_round(round)["uploads"]["train_loss"].mean()

    def step(self) -> RoundResult:
        """Run the next round (``rounds_done``, 0-based) and return what it did."""
        round = self.rounds_done
        out = self._run_round(round)
        self.rounds_done = round + 1
        uploads = {k: v.detach().clone() for k, v in out["uploads"].items()}
        return RoundResult(
            round=round, client_ids=out["clients"], start=out["start"].detach().clone(),
            broadcast={k: v.detach().clone() for k, v in out["broadcast"].items()},
            batches=[list(p.batches) for p in out["plans"]], uploads=uploads,
            train_loss=uploads["train_loss"], global_model=self.w.detach().clone(),
            eval_model=self.server.eval_params(self.w, self.server_state).detach().clone(),
            server_state=flatten_state(self.server_state),
            client_state={k: v.detach().clone() for k, v in self.client_state.items()},
        )

    def _run_round(self, round: int) -> dict:
        return self.driver.train_round([0], round)[0]

    def apply_round(self, round: int, ids: torch.Tensor, start: torch.Tensor, uploads: dict,
                    state_rows: dict) -> None:
        """The end of round ``round`` for this run, once its clients ``ids`` trained from
        ``start``: their new client-state rows are written, the server updates ``w`` from
        the ``uploads``, and the round is kept for the callbacks."""
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
        size = self.cfg.eval_batch_size
        with precision_mode(self.cfg.precision, self.device):
            if self.data.pixels:  # converted a batch at a time, never the whole set at once
                n = self.data.train_y.shape[0]
                correct = torch.cat([
                    self.flat.correct(w_eval, self.data.train_inputs(torch.arange(i, min(i + size, n),
                                                                                  device=self.device),
                                                                     None, self.w.dtype),
                                      self.data.train_y[i:i + size], size)
                    for i in range(0, n, size)])
            else:
                correct = self.flat.correct(w_eval, self.data.eval_train_inputs(), self.data.train_y, size)
        owned = self._owner >= 0
        sums = torch.zeros(self.data.num_clients, dtype=torch.float64, device=self.device)
        sums.index_add_(0, self._owner[owned], correct[owned].double())
        return (sums / self.client_sizes.clamp_min(1)).tolist()

    def evaluate(self) -> tuple[float, float]:
        """Test accuracy and mean cross-entropy of the evaluated model (SWA's average once it
        exists, else ``w``); through the row kernel under the ``rows`` engine."""
        w_eval = self.server.eval_params(self.w, self.server_state)
        with precision_mode(self.cfg.precision, self.device):
            if self.driver.kernel is not None:
                acc, loss = evaluate_rows(self.driver.kernel, w_eval.unsqueeze(0), self.data.test_x, self.data.test_y,
                                          self.cfg.eval_batch_size)
                return float(acc[0]), float(loss[0])
            acc, loss = self.flat.evaluate(w_eval, self.data.test_x, self.data.test_y, self.cfg.eval_batch_size)
        return float(acc), float(loss)

    # ------------------------------------------------------------------ the loop
    def open_record(self, engine: str) -> None:
        """Resume from the run's last checkpoint (if any), keep its metrics up to that
        round, and mark the run running under ``engine``: the start of the round driver's
        loop (:mod:`flcore.sim.round_driver`)."""
        run = self.run
        checkpoint = run.load_checkpoint(map_location=self.device) if run is not None else None
        if checkpoint is not None:
            self.load_state(checkpoint)
        self.metrics = []
        if run is not None:
            run.truncate_metrics(self.rounds_done)
            self.metrics = run.read_metrics()
            run.set_status("running", rounds_done=self.rounds_done, device=str(self.device), engine=engine)

    def run_rounds(self) -> dict:
        """Train the remaining rounds with evaluation, checkpoints and the run record (the
        round driver's loop for a group of one); returns the run's summary."""
        self.driver.progress = self.progress
        return self.driver.run_rounds()[0]

    def record_preview(self) -> None:
        """At a cap the protocol does not evaluate at, evaluate the model anyway (a row
        marked ``"preview": true``, dropped when the run continues), unless the log
        already ends with an evaluation of this round."""
        done = self.rounds_done
        last = self.metrics[-1] if self.metrics else {}
        if not is_preview_round(done, self.cfg) or (last.get("round") == done and "test_accuracy" in last):
            return
        acc, loss = self.evaluate()
        row = {"round": done, "test_accuracy": acc, "test_loss": loss, "preview": True}
        self.metrics.append(row)
        if self.run is not None:
            self.run.append_metrics(row)
