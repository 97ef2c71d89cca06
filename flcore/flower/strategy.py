"""A Flower strategy whose aggregation is an flcore method's server part.

Per round, :meth:`FlcoreStrategy.configure_train` does what
:meth:`flcore.Simulation.plan_round` and the start of a round do -- sample
``per_round`` clients with flcore's draw (:func:`flcore.sim.sample_clients`), run the
probe exchange of a method that needs one, call the server part's ``broadcast`` -- and
sends each sampled client its training message; :meth:`FlcoreStrategy.aggregate_train`
stacks the replies in the order of the draw and calls the server part's ``update``
(pseudo-gradient step and server optimizer, SCAFFOLD's and FedDyn's server state,
FedGloSS's and FedGF's perturbations, SWA's average, IMA's window).  The server state
lives in the strategy, as it lives in flcore's engine.

Where Flower's protocol differs from flcore's engine, and what this strategy does:

- Flower's nodes are not flcore's clients: before the first round the strategy asks every
  node which client it is (one ``query`` message each; the client answers its
  ``node_config["partition-id"]``) and keeps the map.  The nodes must be exactly the
  clients ``0..N-1`` of the federation.
- A method whose server needs a first exchange before it broadcasts (``needs_probe``:
  NaiveFedGloSS, Caldarola et al. 2025, Sec. 5.1.1) gets it: inside ``configure_train``
  the strategy sends the sampled clients a probe message from ``w^t`` (their state
  updates discarded, as flcore's engine discards them), gives the replies to the server
  part's ``probe`` and only then broadcasts.  Such a round costs two exchanges.
- flcore's server step needs every sampled client: a failed or missing reply ends the
  run with an error naming the client (flcore's engine has no failures to model; a
  strategy that drops clients would compute another method).
- The client sizes the server weights by are the ``num-examples`` the clients report.
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

import torch
from flwr.app import ArrayRecord, ConfigRecord, Message, MessageType, MetricRecord, RecordDict
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import Strategy

from flcore.algorithms import get_method
from flcore.sim import sample_clients
from flcore.sim.engine import flatten_state

from .records import CONFIG, GLOBAL_MODEL, METRICS, SENT, START, UPLOADS, from_record, to_record

LOG = logging.getLogger("flwr")
#: How often to look for connected nodes and for replies (seconds).
POLL_S = 0.01


class SimulationStopped(RuntimeError):
    """The simulation ended (its backend failed, or it was interrupted) while the server
    waited."""


class StoppableGrid:
    """A ``Grid`` whose waits end when ``stop`` is set.

    Flower's own ``send_and_receive`` waits up to its timeout even after the simulation
    engine has stopped (a failed Ray backend, Ctrl-C), which would keep the process alive
    for the timeout; this one pushes and pulls the same messages and gives up as soon as
    the engine is gone.
    """

    def __init__(self, grid: Grid, stop: threading.Event) -> None:
        self.grid = grid
        self.stop = stop

    def __getattr__(self, name):
        return getattr(self.grid, name)

    def check(self) -> None:
        if self.stop.is_set():
            raise SimulationStopped("the Flower simulation stopped while the server waited for its clients")

    def send_and_receive(self, messages: Iterable[Message], *, timeout: float | None = None) -> list[Message]:
        waiting = set(self.grid.push_messages(messages))
        deadline = None if timeout is None else time.monotonic() + timeout
        replies: list[Message] = []
        while waiting:
            self.check()
            got = list(self.grid.pull_messages(waiting))
            replies.extend(got)
            waiting -= {m.metadata.reply_to_message_id for m in got}
            if waiting and deadline is not None and time.monotonic() >= deadline:
                break
            if waiting:
                time.sleep(POLL_S)
        return replies


class FlcoreStrategy(Strategy):
    """The server part of ``federation``'s method as a Flower ``Strategy``.

    After (or during) a run: :attr:`global_model` (``w^t``, flat), :attr:`eval_model`
    (SWA's average once it exists, else ``w^t``), :attr:`server_state` (named as
    :class:`flcore.RoundResult` names it), ``rounds_done`` and ``history``
    (per round: the clients in training order, their training losses, and the server-side
    test accuracy when :meth:`evaluate` ran).  The ``ArrayRecord`` it hands Flower after
    each round is ``w^{t+1}`` as the model's ``state_dict``.

    ``server_round`` (Flower's 1-based counter) is not the flcore round: the strategy
    counts its own rounds, so a second ``start`` continues where the first ended.
    """

    def __init__(self, federation, timeout: float = 3600) -> None:
        self.federation = federation
        self.name = federation.name
        self.cfg = federation.cfg
        self.timeout = timeout
        method = get_method(self.cfg.method)
        self.server = method.build_server(self.cfg)
        self.schedule = method.build_schedule(self.cfg)
        self.num_clients = federation.num_clients
        self.w = federation.w0.detach().clone()
        self.state = self.server.init(self.w, self.num_clients)
        self.rounds_done = 0
        self.history: list[dict] = []
        self.nodes: dict[int, int] | None = None  # client id -> Flower node id
        self._round: dict | None = None

    # ------------------------------------------------------------------ results
    @property
    def global_model(self) -> torch.Tensor:
        return self.w.detach().clone()

    @property
    def eval_model(self) -> torch.Tensor:
        return self.server.eval_params(self.w, self.state).detach().clone()

    @property
    def server_state(self) -> dict[str, torch.Tensor]:
        return flatten_state(self.state)

    def initial_arrays(self) -> ArrayRecord:
        return self.federation.initial_arrays()

    # ------------------------------------------------------------------ training
    def configure_train(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord,
                        grid: Grid) -> Iterable[Message]:
        t = self.rounds_done
        if t == 0 and not torch.equal(self.federation.flat_of(arrays), self.w):
            raise ValueError("initial_arrays: not this federation's w^0; start the strategy from "
                             "strategy.initial_arrays() (the clients' state starts from the same w^0)")
        nodes = self.client_nodes(grid)
        clients = sample_clients(self.cfg.seed, t, self.num_clients, self.cfg.per_round).tolist()
        lr = float(self.schedule(t))
        if self.server.needs_probe:
            probe = self._messages(nodes, clients, t, lr, self.w, self.w, {}, config, probe=True)
            uploads, counts = self._collect(grid.send_and_receive(probe, timeout=self.timeout), clients, t)
            self.server.probe(self.w, uploads, counts, self.state, t, self.num_clients)
        start, sent = self.server.broadcast(self.w, self.state, t)
        self._round = {"round": t, "clients": clients, "start": start}
        return self._messages(nodes, clients, t, lr, start, self.w, sent, config, probe=False)

    def aggregate_train(self, server_round: int,
                        replies: Iterable[Message]) -> tuple[ArrayRecord | None, MetricRecord | None]:
        if self._round is None:
            raise RuntimeError("aggregate_train without configure_train")
        t, clients, start = self._round["round"], self._round["clients"], self._round["start"]
        uploads, counts = self._collect(replies, clients, t)
        self.w = self.server.update(self.w, start, uploads, counts, self.state, t, self.num_clients)
        self.rounds_done, self._round = t + 1, None
        loss = uploads["train_loss"]
        self.history.append({"round": t, "clients": clients, "train_loss": loss.tolist()})
        metrics = MetricRecord({"train_loss": float(loss.mean()), "num-examples": int(counts.sum())})
        return ArrayRecord(self.federation.flat.state_dict(self.w.cpu())), metrics

    def client_nodes(self, grid: Grid) -> dict[int, int]:
        """``{client id: node id}``, asked of every node once (a ``query`` message)."""
        if self.nodes is not None:
            return self.nodes
        deadline = time.monotonic() + self.timeout
        while len(node_ids := list(grid.get_node_ids())) < self.num_clients:
            if isinstance(grid, StoppableGrid):
                grid.check()
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(node_ids)} Flower nodes connected within {self.timeout} s; "
                                   f"federation {self.name!r} has {self.num_clients} clients")
            time.sleep(POLL_S)
        ask = RecordDict({CONFIG: ConfigRecord({"federation": self.name})})
        replies = grid.send_and_receive([Message(ask, dst_node_id=n, message_type=MessageType.QUERY)
                                         for n in node_ids], timeout=self.timeout)
        nodes: dict[int, int] = {}
        for reply in replies:
            if reply.has_error():
                raise RuntimeError(f"node {reply.metadata.src_node_id} did not say which client it is: "
                                   f"{reply.error.reason}")
            client = int(reply.content[CONFIG]["client-id"])
            if not 0 <= client < self.num_clients or client in nodes:
                raise ValueError(f"node {reply.metadata.src_node_id} is client {client}: the nodes must be the "
                                 f"clients 0..{self.num_clients - 1} of {self.name!r}, each once "
                                 "(node_config partition-id)")
            nodes[client] = reply.metadata.src_node_id
        if len(nodes) != self.num_clients:
            raise RuntimeError(f"{len(nodes)} of {len(node_ids)} nodes answered; {self.name!r} has "
                               f"{self.num_clients} clients")
        self.nodes = nodes
        return nodes

    def _messages(self, nodes, clients, t, lr, start, w, sent, config, probe: bool) -> list[Message]:
        vectors = {START: start, **sent}
        if not torch.equal(start, w):  # FedGloSS: the clients start at w~^t; parts may read w^t
            vectors[GLOBAL_MODEL] = w
        content = RecordDict({
            CONFIG: ConfigRecord({"federation": self.name, "round": t, "lr": lr, "probe": probe}),
            SENT: to_record(vectors),
            "config": config,
        })
        return [Message(content, dst_node_id=nodes[k], message_type=MessageType.TRAIN) for k in clients]

    def _collect(self, replies: Iterable[Message], clients: list[int], t: int):
        """The replies as flcore's uploads ``{name: [K, ...]}`` and client sizes ``[K]``,
        in the order of ``clients``."""
        assert self.nodes is not None
        client_of = {node: k for k, node in self.nodes.items()}
        got: dict[int, Message] = {}
        for reply in replies:
            k = client_of.get(reply.metadata.src_node_id)
            if reply.has_error():
                raise RuntimeError(f"round {t}: client {k} (node {reply.metadata.src_node_id}) failed: "
                                   f"{reply.error.reason}")
            got[k] = reply
        missing = [k for k in clients if k not in got]
        if missing:
            raise RuntimeError(f"round {t}: no reply from clients {missing} within {self.timeout} s; "
                               "flcore's server step needs every sampled client")
        rows = [from_record(got[k].content[UPLOADS], self.federation.device) for k in clients]
        uploads = {name: torch.stack([row[name] for row in rows]) for name in rows[0]}
        counts = torch.tensor([int(got[k].content[METRICS]["num-examples"]) for k in clients],
                              device=self.federation.device)
        return uploads, counts

    # ------------------------------------------------------------------ evaluation
    def evaluate(self, server_round: int, arrays: ArrayRecord) -> MetricRecord:
        """Server-side test accuracy and loss of :attr:`eval_model` (what flcore's engine
        evaluates), for ``Strategy.start(evaluate_fn=...)``."""
        data = self.federation.data
        accuracy, loss = self.federation.flat.evaluate(self.eval_model, data.test_x, data.test_y,
                                                       self.cfg.eval_batch_size)
        if self.history and self.history[-1]["round"] == self.rounds_done - 1:
            self.history[-1].update(test_accuracy=float(accuracy), test_loss=float(loss))
        return MetricRecord({"accuracy": float(accuracy), "loss": float(loss)})

    def configure_evaluate(self, server_round: int, arrays: ArrayRecord, config: ConfigRecord,
                           grid: Grid) -> Iterable[Message]:
        """No federated evaluation: flcore evaluates on the server (:meth:`evaluate`)."""
        return []

    def aggregate_evaluate(self, server_round: int, replies: Iterable[Message]) -> MetricRecord | None:
        return None

    def summary(self) -> None:
        LOG.info("\t├──> flcore method %s (federation %r): %d clients, %d per round", self.cfg.method, self.name,
                 self.num_clients, self.cfg.per_round)


def server_app(strategies, rounds: int, evaluate: bool = False, stop: threading.Event | None = None) -> ServerApp:
    """A ``ServerApp`` running ``rounds`` rounds of each strategy (one
    :class:`FlcoreStrategy` or several, one after the other on the same nodes), each from
    its federation's ``w^0``; ``evaluate``: server-side test accuracy after every round
    (in each strategy's ``history``); ``stop``: an event that ends the server's waits
    (:class:`StoppableGrid`), set by :func:`~flcore.flower.run_simulation` when Flower's
    engine returns."""
    strategies = [strategies] if isinstance(strategies, FlcoreStrategy) else list(strategies)
    names = [s.name for s in strategies]
    if len(set(names)) != len(names):
        raise ValueError(f"strategies: federation names must differ, got {names}")
    app = ServerApp()

    @app.main()
    def main(grid: Grid, context) -> None:
        if stop is not None:
            grid = StoppableGrid(grid, stop)
        for strategy in strategies:
            strategy.start(grid, initial_arrays=strategy.initial_arrays(), num_rounds=rounds,
                           timeout=strategy.timeout, evaluate_fn=strategy.evaluate if evaluate else None)

    return app
