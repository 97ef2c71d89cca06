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
#     execution_timeout: 300
# ---

# %% [markdown]
# # Checking one step of a method
#
# You have your own implementation of a method, or you want to be sure that flcore's is
# the paper's equation and nothing else. This page drives a simulation **round by
# round** on your own tensors and your own `torch.nn.Module`, looks at what the server
# sent and what each client uploaded, and recomputes one client's local training with a
# ten-line implementation of the paper's update, written from the equation alone.
#
# The entry points, all exported by `flcore`:
#
# - `FederatedData.from_tensors(x, y, test_x, test_y, partition=...)`: your data, split
#   by one of flcore's partitions (`"iid"`, `"dirichlet"`, `"shards"`) or by your own
#   lists of client indices;
# - `Simulation.from_config(config, data=..., model=...)`: a simulation of a method with
#   any module as the model (its parameters, in `named_parameters` order, are the flat
#   vector `w`; its current values are `w^0`);
# - `sim.step()` runs one round and returns a `RoundResult`: the round, the client ids,
#   the point the clients started from, the minibatches each client used, the uploads,
#   the training losses, the new global model, and the server and client state after the
#   round as named tensors (`flcore.config.server_state_of(method)` lists the names with their meaning);
# - `sim.state_dict()` / `sim.load_state_dict(...)` save and restore a simulation between
#   rounds.

# %% [markdown]
# The first cell installs flcore when it is missing (on Colab); the second holds the
# parameters.

# %%
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("flcore") is None:  # Colab: install flcore from its repository
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q",
                           "flcore @ git+https://github.com/flcore/flcore"])

# %% tags=["parameters"]
device = "cpu"
seed = 0

# %% [markdown]
# ## Your data and your model
#
# Two interleaved spirals in two dimensions, 600 training and 200 test points, split over
# 6 clients by the Dirichlet partition of Hsu et al. (2019) with concentration 0.5.
# Everything is in float64 so that the comparison below can be exact to rounding.

# %%
import torch
from torch import nn
from torch.func import functional_call, grad

import flcore
from flcore import FederatedData, Simulation


def spirals(n, generator):
    label = torch.randint(0, 2, (n,), generator=generator)
    t = torch.rand(n, generator=generator, dtype=torch.float64) * 3 + 0.5
    angle = t * 2.5 + torch.pi * label
    x = torch.stack([t * torch.cos(angle), t * torch.sin(angle)], dim=1)
    return x + 0.1 * torch.randn(n, 2, generator=generator, dtype=torch.float64), label


gen = torch.Generator().manual_seed(seed)
x, y = spirals(600, gen)
test_x, test_y = spirals(200, gen)
data = FederatedData.from_tensors(x, y, test_x, test_y, partition="dirichlet", alpha=0.5, num_clients=6, seed=seed)
print("samples per client:", data.client_sizes)


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(2, 32)
        self.out = nn.Linear(32, 2)

    def forward(self, x):
        return self.out(torch.tanh(self.hidden(x)))


torch.manual_seed(seed)
model = SmallNet().double()

# %% [markdown]
# ## Two rounds of FedSAM
#
# Three of the six clients train per round, two local steps each on minibatches of 32,
# with SAM radius $\rho = 0.1$ and learning rate 0.1. Config fields not given keep
# flcore's defaults; `clients` comes from the data.

# %%
config = {"method": "fedsam", "rho": 0.1, "lr": 0.1, "per_round": 3, "local_steps": 2, "batch_size": 32,
          "seed": seed, "device": device, "engine": "sequential"}
sim = Simulation.from_config(config, data=data, model=model)
rounds = [sim.step() for _ in range(2)]
for result in rounds:
    print(f"round {result.round}: clients {result.client_ids}, train loss {result.train_loss.numpy().round(4)}")
    for k, client in enumerate(result.client_ids):
        update = result.client_models[k] - result.start
        print(f"  client {client}: upload norm {float(result.client_models[k].norm()):.6f}, "
              f"||w_k - w^t|| = {float(update.norm()):.6f}")
print("state FedSAM keeps across rounds:", flcore.config.client_state_of("fedsam") or "none")

# %% [markdown]
# ## One client step, by hand
#
# FedSAM's local step (Caldarola et al. 2022, Eq. 3; Foret et al. 2021) on a minibatch
# $B$: $\;\epsilon = \rho\, g / \lVert g \rVert$ with $g = \nabla L_B(w)$, then
# $w \leftarrow w - \eta\, \nabla L_B(w + \epsilon)$. The function below implements only
# that, on the parameters of *your* module, and replays the minibatches that
# `RoundResult.batches` says the client used.

# %%
names = [name for name, _ in model.named_parameters()]
shapes = [p.shape for _, p in model.named_parameters()]


def loss_at(w, idx):
    params = dict(zip(names, (t.view(s) for t, s in zip(torch.split(w, [s.numel() for s in shapes]), shapes))))
    return nn.functional.cross_entropy(functional_call(model, params, (x[idx],)), y[idx])


def sam_client(w, batches, lr, rho, correction=lambda w: 0.0):
    for idx in batches:
        g = grad(loss_at)(w, idx)
        eps = rho * g / g.norm()
        w = w - lr * (grad(loss_at)(w + eps, idx) + correction(w))
    return w


result = rounds[1]
by_hand = sam_client(result.start, result.batches[0], lr=0.1, rho=0.1)
difference = float((by_hand - result.client_models[0]).abs().max())
print(f"client {result.client_ids[0]}, round {result.round}: max |hand - flcore| = {difference:.2e}")
assert difference < 1e-12

# %% [markdown]
# ## Two rounds of FedGloSS
#
# FedGloSS (Caldarola et al. 2025, Algorithm 1) perturbs the *server* model along the
# previous pseudo-gradient, $\tilde w^t = w^t + \rho_s\,\Delta\tilde{}^{t-1}/\lVert
# \Delta\tilde{}^{t-1}\rVert$, and sends $\tilde w^t$; clients run SAM with an ADMM dual
# term, $g \leftarrow g_{SAM} - \sigma_k + (w - \tilde w^t)/\beta$. The run fixes $\rho_s = 0.05$,
# $\beta = 10$ and no warm-up of the clients' radius (the small scale's tuned FedGloSS ramps it
# up over its first rounds), so the hand computation below uses $\rho = 0.1$. The state it keeps:

# %%
for row in flcore.config.client_state_of("fedgloss-sam") + flcore.config.server_state_of("fedgloss-sam"):
    print(f"{row['name']:>18} {row['shape']:>7}  {row['meaning']}")

config = {**config, "method": "fedgloss-sam", "gloss_rho_server": 0.05, "gloss_beta": 10.0, "rho_warmup_rounds": 0}
sim = Simulation.from_config(config, data=data, model=model)
first, second = sim.step(), sim.step()
for result in (first, second):
    print(f"round {result.round}: clients {result.client_ids}, train loss {result.train_loss.numpy().round(4)}")
    for k, client in enumerate(result.client_ids):
        print(f"  client {client}: ||w_k - start|| = {float((result.client_models[k] - result.start).norm()):.6f}")
print("||start of round 1 - w^1|| =", round(float((second.start - first.global_model).norm()), 6), "(rho_s)")

# %% [markdown]
# The second round's start point is the first round's global model moved by $\rho_s$
# along the stored pseudo-gradient, and a client of the second round is the hand SAM step
# with the dual it kept from round one (zero if it did not train then) and the proximal
# pull towards $\tilde w^t$:

# %%
direction = first.server_state["gloss.direction"]
expected_start = first.global_model + 0.05 * direction / direction.norm()
print("start point error:", float((second.start - expected_start).abs().max()))
assert torch.allclose(second.start, expected_start, rtol=0, atol=1e-12)

client = second.client_ids[0]
sigma = first.client_state["dyn_dual"][client]
by_hand = sam_client(second.start, second.batches[0], lr=0.1, rho=0.1,
                     correction=lambda w: -sigma + (w - second.start) / 10.0)
difference = float((by_hand - second.client_models[0]).abs().max())
print(f"client {client}, round {second.round}: max |hand - flcore| = {difference:.2e}")
assert difference < 1e-12

# %% [markdown]
# ## Saving and resuming between rounds
#
# `state_dict()` holds everything later rounds depend on (every random draw is derived
# from the seed, the round and the client), so a simulation restored from it continues
# exactly:

# %%
restored = Simulation.from_config(config, data=data, model=model)
restored.load_state_dict(sim.state_dict())
assert torch.equal(restored.step().global_model, sim.step().global_model)
print("resumed round equals the uninterrupted one")
