"""flcore's methods inside Flower (``flcore.flower``).

Under Flower's simulation engine (its Ray backend, connected to a Ray head on 127.0.0.1
in a private network namespace, stopped even on failure: ``ray_namespace.py``), three
rounds of one method of every family -- FedAvg (on a flwr-datasets partition), FedSAM,
FedASAM, SCAFFOLD, FedDyn, FedGloSS, NaiveFedGloSS (the probe exchange), FedGF,
FedLESAM, IMA, SWA -- equal flcore's own engine on the same federation bit for bit: the
global model, the evaluated model (SWA's average) and every server-state tensor.  All
families run in one simulation (one Ray start).  A client that fails ends the simulation
with an error naming it, promptly.

Without Ray, a Flower ``Grid`` that calls the ``ClientApp`` in-process checks what the
protocol adds: the per-client state kept in each node's ``Context.state`` equals the
engine's client tables, a probe pass leaves it unchanged, and the strategy's refusals
(nodes that are not the clients, a start that is not ``w^0``, a failed client).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("flwr")
pytest.importorskip("flwr_datasets")

import flower_federations as ffed  # noqa: E402
from flwr.app import ArrayRecord, ConfigRecord, Context, Error, Message, RecordDict  # noqa: E402
from ray_namespace import ray_in_namespace  # noqa: E402

import flcore.flower as ff  # noqa: E402
from flcore import FederatedData  # noqa: E402
from flcore.algorithms import METHODS  # noqa: E402
from flcore.config import resolve_config  # noqa: E402
from flcore.errors import ConfigError  # noqa: E402
from flcore.sim import Simulation, sample_clients  # noqa: E402
from flcore.sim.engine import flatten_state  # noqa: E402

#: Over 30 s as a whole file (``make test-fast`` leaves it out).
pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parent

# The simulation, run inside the namespace: every family, then a federation whose client 5
# raises, in one Flower simulation (one Ray start); what came out goes to an .npz (no
# pickle) and a JSON.
DRIVER = """
import json, sys, threading, time
import numpy as np
from flwr.clientapp import ClientApp
from flwr.simulation import run_simulation
import flower_federations as ffed
from flcore.flower import FlcoreClient, Federation, ray_init_args, server_app

out_npz, out_json = sys.argv[1], sys.argv[2]


class Broken(FlcoreClient):
    stamp = out_json + ".broke"  # when client 5 raised (wall clock; Ray's workers share this machine's)

    def train(self, message, context):
        if self.client_id(context) == 5:
            with open(self.stamp, "w") as f:
                f.write(repr(time.time()))
            raise RuntimeError("client 5 broke on purpose")
        return super().train(message, context)


feds = ffed.federations()
broken = Federation(**{**vars(feds["FedAvg"]), "name": "Broken"})
clients = {name: FlcoreClient(fed) for name, fed in feds.items()} | {"Broken": Broken(broken)}
app = ClientApp()
route = lambda message: clients[str(message.content["flcore.config"]["federation"])]
app.train()(lambda message, context: route(message).train(message, context))
app.query()(lambda message, context: route(message).query(message, context))
strategies = [fed.strategy() for fed in feds.values()] + [broken.strategy()]
stop = threading.Event()
started = time.perf_counter()
try:  # the families, then the federation whose client 5 fails in round 0
    run_simulation(server_app(strategies, ffed.ROUNDS, stop=stop), app, num_supernodes=ffed.CLIENTS,
                   backend_config={"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                                   "init_args": {**ray_init_args(), "log_to_driver": False}})
    failure = None
except Exception as exc:
    failure = f"{type(exc).__name__}: {exc}"
finally:
    stop.set()
ended = time.time()
try:
    with open(Broken.stamp) as f:
        after_failure = ended - float(f.read())
except FileNotFoundError:
    after_failure = None
report = {"seconds": time.perf_counter() - started, "after_failure_seconds": after_failure, "failure": failure,
          "clients": {}, "rounds_done": {}}
arrays = {}
for s in strategies:
    arrays[f"{s.name}/global_model"] = s.global_model.numpy()
    arrays[f"{s.name}/eval_model"] = s.eval_model.numpy()
    for key, value in s.server_state.items():
        arrays[f"{s.name}/state/{key}"] = value.numpy()
    report["clients"][s.name] = [h["clients"] for h in s.history]
    report["rounds_done"][s.name] = s.rounds_done
np.savez(out_npz, **arrays)
with open(out_json, "w") as f:
    json.dump(report, f)
print("DONE")
"""


@pytest.fixture(scope="module")
def flower_run(tmp_path_factory):
    """The driver's outputs, after the cluster is stopped."""
    base = tmp_path_factory.mktemp("flower")
    env = {"PYTHONPATH": str(TESTS), "FLCORE_CACHE": str(tmp_path_factory.getbasetemp() / "flcore-cache")}
    with ray_in_namespace(env) as (cluster, driver_env):
        done = subprocess.run(cluster.command([sys.executable, "-c", DRIVER, str(base / "out.npz"),
                                               str(base / "out.json")]),
                              env=driver_env, capture_output=True, text=True, timeout=900)
        interfaces = subprocess.run(cluster.command(["ip", "-o", "link"]), capture_output=True, text=True).stdout
    assert done.returncode == 0 and "DONE" in done.stdout, done.stdout[-3000:] + done.stderr[-5000:]
    assert [line.split(":")[1].strip() for line in interfaces.splitlines()] == ["lo"]
    with np.load(base / "out.npz", allow_pickle=False) as arrays:
        got = dict(arrays)
    return got, json.loads((base / "out.json").read_text())


@pytest.fixture(scope="module")
def engine_runs():
    """flcore's own engine on the same federations, ``{family: (Simulation, [client ids per round])}``."""
    runs = {}
    for name, federation in ffed.federations().items():
        sim = federation.simulation()
        runs[name] = sim, [sim.step().client_ids for _ in range(ffed.ROUNDS)]
    return runs


FAMILY_NAMES = ["FedAvg", *ffed.FAMILIES]


# Flower's engine on Ray, every family: the extended tier.  Every run of the suite checks
# every method through Flower's messages in-process (below) and FedSAM and FedGloSS under
# Flower's engine on Ray, bit for bit, in the smoke book's Flower tutorial page.
@pytest.mark.slow
@pytest.mark.extended
@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_flower_run_equals_flcores_engine(flower_run, engine_runs, family):
    got, report = flower_run
    sim, clients = engine_runs[family]
    assert report["clients"][family] == clients  # the same draw of clients, in the same order
    assert not torch.equal(sim.w, sim.flat.flatten())  # the model moved from w^0
    np.testing.assert_array_equal(got[f"{family}/global_model"], sim.w.numpy())
    eval_model = sim.server.eval_params(sim.w, sim.server_state)
    np.testing.assert_array_equal(got[f"{family}/eval_model"], eval_model.numpy())
    state = flatten_state(sim.server_state)
    assert {k.split("/state/", 1)[1] for k in got if k.startswith(f"{family}/state/")} == set(state)
    for name, value in state.items():
        np.testing.assert_array_equal(got[f"{family}/state/{name}"], value.numpy(), err_msg=name)
    if family == "SWA":
        assert not torch.equal(eval_model, sim.w)  # the SWA average exists and is what is evaluated


@pytest.mark.slow
@pytest.mark.extended
def test_flower_tutorial_runs_under_flowers_engine(tmp_path):
    """The tutorial page (``notebooks/tutorials/flower-fedsam-fedgloss``) executed with
    papermill inside the namespace, as the book's build executes it: FedSAM and FedGloSS
    under Flower's engine equal flcore's engine bit for bit."""
    pytest.importorskip("papermill")
    import nbformat

    path = TESTS.parent / "notebooks" / "tutorials" / "flower-fedsam-fedgloss.ipynb"
    out = tmp_path / path.name
    with ray_in_namespace({}) as (cluster, env):
        done = subprocess.run(cluster.command([sys.executable, "-m", "papermill", str(path), str(out), "--cwd",
                                               str(tmp_path), "-k", "python3", "--no-progress-bar"]),
                              env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    text = "".join(o.get("text", "") for c in nbformat.read(out, as_version=4).cells if c.cell_type == "code"
                   for o in c.get("outputs", []))
    for name in ("fedsam", "fedgloss-sam"):
        assert f"{name}: same clients True, max |Flower - flcore| = 0.0e+00" in text, name
    assert "12 Flower rounds in" in text
    chatter = [line for line in text.splitlines() if " INFO " in f" {line} " or "WARNING" in line]
    assert not chatter, chatter[:5]  # Ray's and Flower's log lines stay off the page


def test_the_families_revisit_clients_so_their_state_must_persist():
    draws = [sample_clients(ffed.SEED, t, ffed.CLIENTS, ffed.PER_ROUND).tolist() for t in range(ffed.ROUNDS)]
    seen, revisits = set(), 0
    for clients in draws:
        revisits += len(seen & set(clients))
        seen |= set(clients)
    assert revisits >= 2, draws


@pytest.mark.slow
@pytest.mark.extended
def test_a_failing_client_ends_the_simulation_naming_it(flower_run):
    _, report = flower_run
    assert report["failure"] is not None, "the simulation did not fail"
    assert "round 0: client 5" in report["failure"] and "broke on purpose" in report["failure"], report["failure"]
    assert report["rounds_done"]["Broken"] == 0
    assert all(report["rounds_done"][name] == ffed.ROUNDS for name in FAMILY_NAMES)
    # ended once the client raised, not after Flower's one-hour reply timeout (the
    # simulation's own length depends on the machine's load, so it is not what is timed)
    assert report["after_failure_seconds"] is not None and report["after_failure_seconds"] < 300, report


# ----------------------------------------------------------------------------- without Ray

class InProcessGrid:
    """A Flower ``Grid`` whose nodes run the ``ClientApp`` in this process, one
    ``Context`` per node kept across messages (as Flower's engine keeps them); a client
    that raises sends an error reply, as Flower's engine does."""

    def __init__(self, app, clients: int, partition_ids=None):
        self.app = app
        ids = list(range(clients)) if partition_ids is None else partition_ids
        self.contexts = {1000 + i: Context(run_id=1, node_id=1000 + i, node_config={"partition-id": k},
                                           state=RecordDict(), run_config={})
                         for i, k in enumerate(ids)}

    def get_node_ids(self):
        return list(self.contexts)

    def send_and_receive(self, messages, *, timeout=None):
        replies = []
        for message in messages:
            try:
                replies.append(self.app(message, self.contexts[message.metadata.dst_node_id]))
            except Exception as exc:  # noqa: BLE001 - what Flower's engine does with a client's error
                replies.append(Message(Error(code=1, reason=f"{type(exc).__name__}: {exc}"), reply_to=message))
        return replies

    def context_of(self, client: int) -> Context:
        return next(c for c in self.contexts.values() if c.node_config["partition-id"] == client)


@pytest.fixture(autouse=True)
def server_identity(monkeypatch):
    """Who sends the messages: set by Flower's engine in a ``ServerApp``, by hand here."""
    from flwr.supercore.task_identity import TaskIdentity

    for name in ("_run_id", "_node_id", "_task_id"):
        monkeypatch.setattr(TaskIdentity, name, 1 if name != "_node_id" else 0)


def run_rounds(strategy, grid, rounds):
    arrays = strategy.initial_arrays()
    for t in range(1, rounds + 1):
        replies = grid.send_and_receive(strategy.configure_train(t, arrays, ConfigRecord(), grid))
        arrays, _ = strategy.aggregate_train(t, replies)
    return arrays


@pytest.fixture(scope="module")
def small():
    data = ffed.float64_data(ffed.mnist1d())
    return data, ffed.float64_model(data)


@pytest.mark.parametrize("method, fields", [("scaffold", {}), ("fedgloss-sam", ffed.FAMILIES["FedGloSS"][1]),
                                            ("naivefedgloss", ffed.FAMILIES["NaiveFedGloSS"][1]),
                                            ("fedlesam", {"rho": 0.05, "lesam_first_visit": "w0"})])
def test_client_state_in_context_equals_the_engines_tables(small, method, fields):
    data, model = small
    federation = ff.Federation.from_config(ffed.config(method, **fields), data=data, model=model)
    grid = InProcessGrid(ff.client_app(federation), federation.num_clients)
    strategy = federation.strategy()
    arrays = run_rounds(strategy, grid, ffed.ROUNDS)
    sim = federation.simulation()
    for _ in range(ffed.ROUNDS):
        sim.step()
    assert torch.equal(federation.flat_of(arrays), sim.w) and torch.equal(strategy.global_model, sim.w)
    client = ff.FlcoreClient(federation)
    trained = {k for h in strategy.history for k in h["clients"]}
    assert sim.client_state and trained != set(range(federation.num_clients))
    for k in range(federation.num_clients):
        stored = client.stored_state(grid.context_of(k))
        if k not in trained:
            assert stored == {}  # a client that never trained holds nothing yet
            continue
        assert set(stored) == set(sim.client_state)
        for name, table in sim.client_state.items():
            assert torch.equal(stored[name], table[k]), (k, name)


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_through_flowers_messages_equals_the_engine(name):
    """Every registry method, two rounds through the strategy, the messages and the client
    app (in this process): the same global and evaluated model as flcore's engine."""
    fields = {} if name.startswith("centralized") else {"local_steps": 2}
    cfg = resolve_config(scale="smoke", method=name, rounds=2, alpha=0.5, model="mnist1d_mlp", engine="sequential",
                         **fields)
    federation = ff.Federation.from_config(cfg)
    strategy = federation.strategy()
    run_rounds(strategy, InProcessGrid(ff.client_app(federation), federation.num_clients), 2)
    sim = federation.simulation()
    sim.step(), sim.step()
    assert torch.equal(strategy.global_model, sim.w)
    assert torch.equal(strategy.eval_model, sim.server.eval_params(sim.w, sim.server_state))


def test_probe_messages_leave_the_client_state_alone(small):
    data, model = small
    federation = ff.Federation.from_config(ffed.config("naivefedgloss", **ffed.FAMILIES["NaiveFedGloSS"][1]),
                                           data=data, model=model)
    grid = InProcessGrid(ff.client_app(federation), federation.num_clients)
    strategy = federation.strategy()
    run_rounds(strategy, grid, 1)
    client = ff.FlcoreClient(federation)
    k = strategy.history[0]["clients"][0]
    before = client.stored_state(grid.context_of(k))["dyn_dual"]
    assert before.abs().sum() > 0
    probe = strategy._messages(strategy.nodes, [k], 1, 0.05, strategy.w, strategy.w, {}, ConfigRecord(), probe=True)
    reply = grid.send_and_receive(probe)[0]
    assert not reply.has_error()
    assert torch.equal(client.stored_state(grid.context_of(k))["dyn_dual"], before)


def test_a_failed_client_is_named_and_stops_the_run(small):
    data, model = small
    federation = ff.Federation.from_config(ffed.config("fedavg"), data=data, model=model)
    app = ff.client_app(federation)

    def failing(message, context):
        if context.node_config["partition-id"] == 5 and message.metadata.message_type == "train":
            raise RuntimeError("disk full")
        return app(message, context)

    grid = InProcessGrid(failing, federation.num_clients)
    with pytest.raises(RuntimeError, match=r"round 0: client 5 \(node \d+\) failed: RuntimeError: disk full"):
        run_rounds(federation.strategy(), grid, 1)


def test_nodes_must_be_the_federations_clients(small):
    data, model = small
    federation = ff.Federation.from_config(ffed.config("fedavg"), data=data, model=model)
    grid = InProcessGrid(ff.client_app(federation), 6, partition_ids=[0, 1, 2, 3, 4, 4])
    with pytest.raises(ValueError, match="is client 4: the nodes must be the clients 0..5"):
        run_rounds(federation.strategy(), grid, 1)


def test_the_strategy_starts_from_w0_only(small):
    data, model = small
    federation = ff.Federation.from_config(ffed.config("fedavg"), data=data, model=model)
    grid = InProcessGrid(ff.client_app(federation), federation.num_clients)
    strategy = federation.strategy()
    other = ArrayRecord(federation.flat.state_dict(federation.w0 + 1))
    with pytest.raises(ValueError, match="initial_arrays: not this federation's w\\^0"):
        strategy.configure_train(1, other, ConfigRecord(), grid)


def test_a_stopped_simulation_ends_the_servers_wait():
    import threading

    from flcore.flower.strategy import SimulationStopped, StoppableGrid

    class Silent:  # a grid whose nodes never answer
        def push_messages(self, messages):
            return ["m1"]

        def pull_messages(self, ids):
            return []

    stop = threading.Event()
    grid = StoppableGrid(Silent(), stop)
    threading.Timer(0.2, stop.set).start()
    started = time.perf_counter()
    with pytest.raises(SimulationStopped):
        grid.send_and_receive([], timeout=3600)
    assert time.perf_counter() - started < 5


# ----------------------------------------------------------------------------- partition: flwr

def test_a_partitioners_partitions_are_the_clients():
    from flwr_datasets.partitioner import DirichletPartitioner

    federation = ff.Federation.from_config(ffed.config("fedavg", model="mnist1d_mlp"),
                                           partitioner=ffed.dirichlet_partitioner())
    assert federation.cfg.partition == "flwr" and federation.num_clients == ffed.CLIENTS
    # the same partitioner, given the same table by hand, deals the same samples
    from datasets import Dataset

    labels = ffed.mnist1d().train_y
    theirs = ffed.dirichlet_partitioner()
    theirs.dataset = Dataset.from_dict({"label": labels.tolist(), "index": list(range(len(labels)))})
    for k in range(ffed.CLIENTS):
        assert federation.data.client_indices[k].tolist() == theirs.load_partition(k)["index"]
    assert sorted(i for idx in federation.data.client_indices for i in idx.tolist()) == list(range(len(labels)))
    assert isinstance(theirs, DirichletPartitioner)


def test_partition_indices_feed_your_own_tensors():
    from flwr_datasets.partitioner import IidPartitioner

    x, y = torch.randn(40, 3), torch.arange(40) % 2
    parts = ff.partition_indices(IidPartitioner(num_partitions=4), y)
    data = FederatedData.from_tensors(x, y, x[:8], y[:8], partition=parts)
    assert data.client_sizes == [10, 10, 10, 10]


def test_partition_flwr_mistakes_get_one_line():
    from flwr_datasets.partitioner import IidPartitioner

    base = ffed.config("fedavg", model="mnist1d_mlp")
    assert resolve_config({**base, "partition": "flwr"}).partition == "flwr"
    with pytest.raises(ConfigError, match="'flwr' takes the clients from a flwr-datasets partitioner"):
        Simulation.from_config({**base, "partition": "flwr"})
    with pytest.raises(ConfigError, match="got 'dirichlet' with a flwr-datasets partitioner"):
        ff.Federation.from_config({**base, "partition": "dirichlet"}, partitioner=IidPartitioner(4))
    with pytest.raises(ConfigError, match="clients.*got 5 but the partitioner has 4 partitions"):
        ff.Federation.from_config({**base, "clients": 5}, partitioner=IidPartitioner(4))
    used = IidPartitioner(4)
    ff.partition_indices(used, torch.arange(40) % 2)
    with pytest.raises(ValueError, match="partitioner: already holds a data set"):
        ff.partition_indices(used, torch.arange(40) % 2)


@pytest.mark.parametrize("rows", [[-1, 0, 1], [0, 1, 40], [0, 1, 10**9]])
def test_a_partition_outside_the_training_set_is_one_error(rows):
    """A partitioner whose partition names a row that is not there (a negative index would
    alias another sample, a large one crash) is refused with one line naming the range."""
    from datasets import Dataset
    from flwr_datasets.partitioner import Partitioner

    class Crafted(Partitioner):
        @property
        def num_partitions(self):
            return 1

        def load_partition(self, partition_id):
            return Dataset.from_dict({"label": [0] * len(rows), "index": rows})

    with pytest.raises(ValueError, match=r"indexes samples outside 0\.\.39"):
        ff.partition_indices(Crafted(), torch.arange(40) % 2)


def test_without_flower_the_import_says_how_to_install():
    probe = ("import sys; sys.modules['flwr'] = None\n"
             "try:\n    import flcore.flower\nexcept ImportError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(TESTS.parent)})
    assert done.stdout.strip() == 'flcore.flower needs Flower: pip install "flcore[flower]"', done.stderr[-2000:]


def test_quiet_output_keeps_rays_and_flowers_lines_off_the_page(capfd):
    """The Flower tutorial printed Ray's INFO and WARNING lines: those of its Python loggers
    and those its processes write to the inherited standard error.  Quiet, none reaches the
    page; a failure shows what was printed; the loggers' levels come back."""
    import logging
    import warnings

    from flcore.flower.simulation import quiet_output

    ray, child = logging.getLogger("ray"), logging.getLogger("ray.quiet_test_child")
    handler = logging.StreamHandler(sys.__stderr__)
    before = ray.level
    ray.addHandler(handler)
    ray.setLevel(logging.INFO)
    child.setLevel(logging.INFO)
    process = [sys.executable, "-c", "import sys; sys.stderr.write('[raylet] INFO started\\n'); "
                                     "print('WARNING object store on /tmp', flush=True)"]
    try:
        with quiet_output():
            ray.info("INFO worker.py -- Started a local Ray instance.")
            child.warning("WARNING services.py -- shared memory is small")
            subprocess.run(process, check=True)
            print("printed by the library")
            warnings.warn("a deprecation notice", DeprecationWarning, stacklevel=1)
        out, err = capfd.readouterr()
        assert out == "" and err == "", (out, err)
        assert ray.level == logging.INFO and child.level == logging.INFO
        with pytest.raises(RuntimeError, match="broke"), quiet_output():
            subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('ERROR raylet died\\n')"], check=True)
            raise RuntimeError("the simulation broke")
        assert "ERROR raylet died" in capfd.readouterr().err
        print("after")
        assert capfd.readouterr().out == "after\n"  # the descriptors are back
    finally:
        ray.removeHandler(handler)
        ray.setLevel(before)
        child.setLevel(logging.NOTSET)
