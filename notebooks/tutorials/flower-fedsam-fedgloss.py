# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     notebook_metadata_filter: mystnb
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
#   mystnb:
#     execution_mode: force
#     execution_timeout: 900
# ---

# %% [markdown]
# # FedSAM and FedGloSS in your Flower project
#
# You run your federated experiments with [Flower](https://flower.ai) and want the
# flat-minima methods -- FedSAM (Caldarola et al. 2022; Qu et al. 2022) and FedGloSS
# (Caldarola et al. 2025) here, and every other method of flcore's registry the same
# way. `flcore.flower` turns a method into the two things a Flower app is made of:
#
# - a **strategy** (`FlcoreStrategy`, a Flower `Strategy`) whose aggregation is the
#   method's server part: its server optimizer and state, FedGloSS's server-side SAM
#   step, SWA's average, IMA's window;
# - a **client app** (`client_app(...)`, a Flower `ClientApp`) whose `train` is the
#   method's client part: local training with the method's perturbation and corrections,
#   with the state a client keeps across rounds (FedGloSS's dual $\sigma_k$, SCAFFOLD's
#   control variate) in the node's `Context.state`.
#
# Your partitions stay yours: any [Flower Datasets](https://flower.ai/docs/datasets/)
# partitioner decides which samples each client holds (`partition: flwr`). And a Flower
# run equals flcore's own engine on the same federation, to the last bit; the last
# section checks it.
#
# ## Install
#
# In a fresh virtual environment, from flcore's checkout:
#
# ```bash
# python -m venv .venv && . .venv/bin/activate
# pip install -e ".[flower]"
# ```
#
# The `flower` extra brings a pinned Flower (`flwr`), Flower Datasets and Ray, the engine
# under Flower's simulation.
#
# The first cell installs flcore with Flower when they are missing (on Colab); the second
# holds the parameters of this page.

# %%
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("flcore") is None or importlib.util.find_spec("flwr") is None:  # Colab
    requirement = "flcore @ git+https://github.com/flcore/flcore"
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q",
                           requirement.replace("flcore @", "flcore[flower] @")])

# %% tags=["parameters"]
device = "cpu"
seed = 0
rounds = 6

# %% [markdown]
# ## Your data, your partitions
#
# MNIST-1D (Greydanus 2020), generated on this machine, split over 10 clients by Flower
# Datasets' `DirichletPartitioner` (label skew with concentration 0.5). flcore hands the
# partitioner the training set as a `datasets.Dataset` with the columns `label` and
# `index`, so partition by `"label"`; each partition becomes a client. A `Federation`
# holds what the server and the clients share: the resolved config, the data and the
# initial model $w^0$ (drawn from the seed, so both sides build the same one).

# %%
import warnings

# tqdm warns that notebook progress bars need ipywidgets when Flower Datasets is imported
warnings.filterwarnings("ignore", message="IProgress not found")

import torch
from flwr_datasets.partitioner import DirichletPartitioner

import flcore.flower as ff
from flcore.algorithms import get_method

torch.set_num_threads(1)  # as Ray's client workers: see the last section


def partitioner():
    return DirichletPartitioner(num_partitions=10, partition_by="label", alpha=0.5, seed=seed,
                                min_partition_size=20)


common = {"dataset": "mnist1d", "model": "mnist1d_mlp", "num_samples": 2000, "per_round": 4, "local_epochs": 2,
          "batch_size": 32, "lr": 0.1, "rounds": rounds, "seed": seed, "device": device}
fedsam = ff.Federation.from_config({**common, "method": "fedsam", "rho": 0.05}, partitioner=partitioner())
fedgloss = ff.Federation.from_config({**common, "method": "fedgloss-sam", "rho": 0.05, "gloss_rho_server": 0.05,
                                      "gloss_beta": 10.0}, partitioner=partitioner())
print("samples per client:", fedsam.data.client_sizes)
print("the same partition for both:", fedsam.data.client_sizes == fedgloss.data.client_sizes)

# %% [markdown]
# What each method keeps between rounds, on the clients and on the server (`P` is the
# number of model parameters, `N` the number of clients):

# %%
for federation in (fedsam, fedgloss):
    method = get_method(federation.cfg.method)
    print(f"{federation.name}: {method.summary}")
    for row in method.client_state(federation.cfg) + method.server_state(federation.cfg):
        print(f"  {row['name']:>16} {row['shape']:>7}  {row['meaning']}")

# %% [markdown]
# ## The strategy and the client app
#
# `federation.strategy()` is a Flower `Strategy`; `ff.client_app(federation)` a Flower
# `ClientApp`; `ff.server_app(strategy, rounds)` a `ServerApp` that runs the strategy from
# $w^0$. In a Flower project run by `flwr run`, they are the two components your
# `pyproject.toml` names:
#
# ```python
# # my_project/federation.py: built the same way on the server and on every node
# from flwr_datasets.partitioner import DirichletPartitioner
# import flcore.flower as ff
#
# fedgloss = ff.Federation.from_config(
#     {"method": "fedgloss-sam", "dataset": "mnist1d", "rho": 0.05, "gloss_rho_server": 0.05},
#     partitioner=DirichletPartitioner(num_partitions=10, partition_by="label", alpha=0.5, seed=0))
#
# # my_project/server_app.py
# app = ff.server_app(fedgloss.strategy(), rounds=100, evaluate=True)
#
# # my_project/client_app.py
# app = ff.client_app(fedgloss)
# ```
#
# ```toml
# [tool.flwr.app.components]
# serverapp = "my_project.server_app:app"
# clientapp = "my_project.client_app:app"
# ```
#
# Node `k` is client `k`: Flower's simulation numbers its nodes' `partition-id`
# 0..N-1, and a SuperNode of a real deployment is started with
# `--node-config "partition-id=K"`; run as many nodes as the federation has clients.
#
# ## A finished simulation
#
# `ff.run_simulation` runs both methods, one after the other, under Flower's simulation
# engine (`flwr.simulation.run_simulation`, its Ray backend), evaluating the global model
# on the server after every round. Ray is started with its node address on 127.0.0.1 and
# stopped when the simulation ends; Ray's own servers still listen on every interface,
# so on a shared machine run it where others cannot reach (flcore's tests run it in a
# private network namespace and connect to it through `RAY_ADDRESS`, which
# `run_simulation` honours).

# %%
import time

started = time.perf_counter()
sam_strategy, gloss_strategy = ff.run_simulation([fedsam, fedgloss], rounds, evaluate=True)
print(f"{2 * rounds} Flower rounds in {time.perf_counter() - started:.1f} s")
for strategy in (sam_strategy, gloss_strategy):
    print(strategy.name)
    for row in strategy.history:
        loss = sum(row["train_loss"]) / len(row["train_loss"])
        print(f"  round {row['round'] + 1}: clients {row['clients']}, train loss {loss:.4f}, "
              f"test accuracy {row['test_accuracy']:.4f}")

# %% [markdown]
# The FedGloSS clients started every round from the server's perturbed model
# $\tilde w^t = w^t + \rho_s \tilde\Delta^{t-1}/\lVert\tilde\Delta^{t-1}\rVert$, and the
# server kept the direction $\tilde\Delta^{t}$ and the dual $h$ between rounds:

# %%
for name, value in gloss_strategy.server_state.items():
    print(f"{name:>16}: shape {tuple(value.shape)}, norm {float(value.norm()):.4f}")

# %% [markdown]
# ## The same run as flcore's own engine
#
# Both sample the same clients and the same minibatches -- every random draw in flcore
# derives from `(seed, purpose, round, client)`, so a Flower client computes the batches
# flcore's engine would give it -- and run the same local and server code. Ray gives each
# client worker one thread, and this page set one thread for the server and for flcore's
# engine (its first code cell). The global models after the last round agree to float32
# rounding, at most $10^{-6}$ apart (about $10^{-7}$ here: Flower's server and flcore's
# round driver take their sums in orders of their own):

# %%
for federation, strategy in ((fedsam, sam_strategy), (fedgloss, gloss_strategy)):
    sim = federation.simulation()
    clients = [sim.step().client_ids for _ in range(rounds)]
    difference = float((strategy.global_model - sim.w).abs().max())
    print(f"{federation.name}: same clients {clients == [row['clients'] for row in strategy.history]}, "
          f"max |Flower - flcore| = {difference:.1e}")
    assert clients == [row["clients"] for row in strategy.history] and difference <= 1e-6

# %% [markdown]
# ## With Flower's launcher: `flwr run`
#
# `ff.run_simulation` calls `flwr.simulation.run_simulation`, which Flower deprecates in
# favour of its launcher, `flwr run`: a Flower App (a folder whose `pyproject.toml` names
# the server and client apps and the run's configuration) submitted to a running
# SuperLink, whose SuperNodes run the clients. `flcore.flower.app` is that app for any
# method: its server app and its client app build the same `Federation` from the run's
# configuration (flcore's config fields) on every node, so all nodes hold the same split
# and $w^0$. `write_app` writes the folder; `local_deployment` starts a SuperLink and one
# SuperNode per client on 127.0.0.1 (Flower's home in a temporary folder) and stops them
# all when the block ends; `flwr_run` runs `flwr run` and asks the SuperLink how the run
# ended:
#
# ```python
# from flcore.flower.app import read_result, write_app
# from flcore.flower.launcher import flwr_run, local_deployment
#
# config = {"method": "fedsam", "scale": "smoke", "rounds": 6, "clients": 10, "per_round": 5, "seed": 0}
# app = write_app("fedsam-app", {**config, "evaluate": True, "result-file": "fedsam.npz"})
# with local_deployment(clients=10) as deployment:
#     flwr_run(app, deployment)
# result = read_result("fedsam.npz")   # the final model, SWA's average if any, the history
# ```
#
# By hand, with `FLWR_HOME` naming a folder whose `config.toml` holds the connection
# `[superlink.local-deployment]` (`address = "127.0.0.1:9100"`, `insecure = true`):
#
# ```bash
# flower-superlink --insecure --host 127.0.0.1 --port 9100 &
# for k in $(seq 0 9); do
#   flower-supernode --insecure --superlink 127.0.0.1:9100 --port $((9101 + k)) --node-config "partition-id=$k" &
# done
# flwr run fedsam-app local-deployment --stream
# ```
#
# The final model of such a run equals flcore's engine on the same configuration bit for
# bit (`tests/test_flower_launcher.py` runs FedSAM and SCAFFOLD this way in the extended
# tier, `make test-extended`). Every SuperNode starts the client app in a process of its
# own, so a round costs a few seconds more than in the simulation above.

# %% [markdown]
# ## What Flower's protocol changes
#
# - **Which node is which client.** Before the first round the strategy asks every node
#   its client id (one `query` message each) and keeps the map.
# - **Per-client state** lives in each node's `Context.state` (Flower keeps a node's
#   context for the whole run), under `flcore.client_state.<federation name>`. A client
#   that first trains at round 50 initialises it then, as flcore's engine does.
# - **Two exchanges in one round.** NaiveFedGloSS needs the round's pseudo-gradient at
#   $w^t$ before it can broadcast $\tilde w^t$: its strategy sends the sampled clients a
#   probe message first (their state untouched), then the training message.
# - **Every sampled client must answer.** The methods' server steps are defined on the
#   sampled set; a failed client ends the run with an error naming it.
# - **Evaluation** runs on the server, on the model flcore evaluates (SWA's average once
#   it exists), not on the clients.
#
# Every method of flcore's registry goes through the same strategy and client app (the
# tests run each of them through Flower's messages against flcore's engine). What each
# keeps in the nodes' `Context.state`, and which needs the second exchange:

# %%
import textwrap
from collections import defaultdict

from flcore import resolve_config
from flcore.algorithms import METHODS

by_state, probed = defaultdict(list), []
for name, method in METHODS.items():
    cfg = resolve_config({"method": name, "dataset": "mnist1d", "scale": "smoke"})
    if method.build_server(cfg).needs_probe:
        probed.append(name)
    by_state[", ".join(row["name"] for row in method.client_state(cfg)) or "nothing"].append(name)
for state, names in by_state.items():
    print(textwrap.fill(f"{state}: {', '.join(names)}", width=100, subsequent_indent="    "))
print("two exchanges per round (a probe, then training):", ", ".join(probed))
