"""A Flower client app whose ``train`` is an flcore method's client part.

A training message carries the round, the learning rate, the start point and what the
server part broadcast (:mod:`flcore.flower.records`).  The client computes its own batch
plan (:func:`flcore.sim.engine.client_round_plan`: the draws derive from ``(seed,
"batches", round, client)``, so they are the minibatches flcore's engine gives this
client) and runs the method's local procedure on it
(:func:`flcore.sim.local_training.train_chunk`, the code flcore's engine runs for one
client), then replies with its uploads and ``num-examples``.

Per-client state (SCAFFOLD's control ``c_k``, FedDyn's and FedGloSS's duals, FedSMOO's
``mu_k``, FedLESAM's ``w_i^old``...) lives in the node's ``Context.state`` under
``flcore.client_state.<federation>``: Flower keeps a node's context across the messages of
a run, in simulation and on a SuperNode, so a client that returns after many rounds finds
its own state, as in flcore's engine (which keeps one row per client).  A fresh node
initialises it from the method's spec; the "model" initialiser (FedLESAM's ``w_i^old``)
is ``w^0``, which the client knows from its :class:`~flcore.flower.Federation` rather
than from a message.  A probe pass (NaiveFedGloSS) reads the state and keeps it unchanged.
"""
from __future__ import annotations

import copy

import torch
from flwr.app import ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from flcore.algorithms import get_method
from flcore.flat import FlatModel
from flcore.sim.engine import client_round_plan, init_client_state
from flcore.sim.local_training import train_chunk

from .records import CONFIG, GLOBAL_MODEL, METRICS, SENT, START, UPLOADS, from_record, state_key, to_record

#: ``node_config`` key of a node's client id (Flower's simulation sets it).
PARTITION_ID = "partition-id"


class FlcoreClient:
    """The client part of ``federation``'s method, one client at a time.

    :meth:`train` and :meth:`query` are ``ClientApp`` handlers; :func:`client_app`
    registers them.  The object travels to Flower's workers (pickled); the model parts are
    rebuilt there on first use.
    """

    def __init__(self, federation) -> None:
        self.name = federation.name
        self.cfg = federation.cfg
        self.data = federation.data
        self.module = federation.flat.module
        self.w0 = federation.w0
        self.device = federation.device
        self._parts = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_parts": None}

    def parts(self):
        """``(FlatModel, LocalUpdate)`` of the method, built once per process."""
        if self._parts is None:
            flat = FlatModel(copy.deepcopy(self.module))
            self._parts = flat, get_method(self.cfg.method).build_client(self.cfg, flat)
        return self._parts

    def client_id(self, context: Context) -> int:
        if PARTITION_ID not in context.node_config:
            raise ValueError(f"node_config has no {PARTITION_ID!r}: flcore needs each node's client id "
                             f"(0..{self.data.num_clients - 1})")
        client = int(context.node_config[PARTITION_ID])
        if not 0 <= client < self.data.num_clients:
            raise ValueError(f"{PARTITION_ID} {client} is not a client of {self.name!r} "
                             f"(0..{self.data.num_clients - 1})")
        return client

    def query(self, message: Message, context: Context) -> Message:
        """Say which client this node is."""
        return Message(RecordDict({CONFIG: ConfigRecord({"client-id": self.client_id(context)})}),
                       reply_to=message)

    def train(self, message: Message, context: Context) -> Message:
        """One round of local training (or a probe pass) from the message's start point."""
        settings = message.content[CONFIG]
        t, lr, probe = int(settings["round"]), float(settings["lr"]), bool(settings["probe"])
        client = self.client_id(context)
        flat, update = self.parts()
        sent = from_record(message.content[SENT], self.device)
        start = sent.pop(START)
        global_model = sent.pop(GLOBAL_MODEL, start)
        rows = self.load_state(context, update.client_state_spec())
        plan = client_round_plan(self.cfg, self.data, t, client)
        out = train_chunk(update, self.data, start, [plan], t, lr, flat.grad_fn(batched=False), rows, sent,
                          global_model, flat.weight_mask)
        if not probe:
            context.state[state_key(self.name)] = to_record({k: v[0] for k, v in out["client_state"].items()})
        uploads = {k: v[0] for k, v in out.items() if k != "client_state"}
        metrics = MetricRecord({"num-examples": plan.num_samples, "train_loss": float(uploads["train_loss"])})
        return Message(RecordDict({UPLOADS: to_record(uploads), METRICS: metrics}), reply_to=message)

    def load_state(self, context: Context, spec: dict[str, str]) -> dict[str, torch.Tensor]:
        """This node's client-state rows (``[1, ...]`` each), initialised on first use."""
        if not spec:
            return {}
        key = state_key(self.name)
        if key not in context.state:
            return init_client_state(spec, self.w0.to(self.device), 1)
        stored = from_record(context.state[key], self.device)
        if set(stored) != set(spec):
            raise ValueError(f"{key}: the node holds {sorted(stored)}; method {self.cfg.method!r} keeps {sorted(spec)}")
        return {name: stored[name].unsqueeze(0) for name in spec}

    def stored_state(self, context: Context) -> dict[str, torch.Tensor]:
        """What this node keeps for the federation (empty before its first round)."""
        key = state_key(self.name)
        return from_record(context.state[key]) if key in context.state else {}


def client_app(*federations) -> ClientApp:
    """A ``ClientApp`` serving the clients of one or more
    :class:`~flcore.flower.Federation` objects (messages name their federation)."""
    clients = {}
    for federation in federations:
        if federation.name in clients:
            raise ValueError(f"federations: two are named {federation.name!r}; give each its own name")
        clients[federation.name] = FlcoreClient(federation)
    app = ClientApp()

    def route(message: Message) -> FlcoreClient:
        name = str(message.content[CONFIG]["federation"])
        if name not in clients:
            raise ValueError(f"no federation named {name!r} here (this app serves {sorted(clients)})")
        return clients[name]

    @app.train()
    def train(message: Message, context: Context) -> Message:
        return route(message).train(message, context)

    @app.query()
    def query(message: Message, context: Context) -> Message:
        return route(message).query(message, context)

    return app
