# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Figure 1: loss surfaces of centralized and federated training
#
# **What the paper says.** Figure 1 (a)-(c) draws the loss surface of a model trained
# centrally and of FedAvg's global model under Dirichlet splits with coefficients 0.6 and
# 0.06 (panel labels "Centralized", "Federated (0.6)", "Federated (0.06)"; the caption is
# lost in our copy): the centralized surface is much flatter, and more heterogeneity makes
# the federated one sharper. Panels (d)-(f) are drawings (FedSAM's two steps, the conflict
# between local and global flat minima, FedLESAM's estimate) with no data: they are not
# regenerated. Pictures only, no numbers.
#
# **How it is made here.** Centralized SGD on the pooled training data (one client holding
# everything; a round is an epoch) and FedAvg at Dirichlet 0.6 and 0.06 (per-class
# coefficients, `alpha = a x classes`) with the FedLESAM protocol, 100 clients with 10% per
# round; CIFAR-10 is our reading (the paper does not name the data set). Surfaces as on
# Figure 3's page. Below the paper scale MNIST-1D stands in for CIFAR-10 and the FedAvg runs
# are 80 rounds long (labelled `rounds`).
#
# **How to rerun.** `flcore reproduce fedlesam-fig-1 --scale small`; `--scale paper` on a GPU.

# %% [markdown]
# The first cell installs flcore when it is missing (on Colab); the second holds the
# parameters that `flcore reproduce` sets.

# %%
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("flcore") is None:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "flcore @ git+https://github.com/flcore/flcore"])

# %% tags=["parameters"]
scale = "smoke"  # smoke (seconds, CI) | small (minutes, CPU) | paper (the paper's protocol, GPU)
device = "auto"  # auto | cpu | cuda
seeds = [0]  # the paper reports one run per configuration
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
workers = None  # runs trained at once on a CPU; None: one per core
data_root = "data"  # CIFAR folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
from flcore.papers.fedlesam.analysis import show_global_surfaces
from flcore.report.page import Page

page = Page.from_parameters("fedlesam-fig-1", globals())

# %% [markdown]
# ## The runs
#
# Finished runs come from the store, missing ones are trained now.

# %%
runs = page.train()

# %%
runs["panel"] = [("Centralized" if a == "Centralized" else f"Federated ({split[4:]})")
                 for a, split in zip(runs["algorithm"], runs["split"])]

# %% [markdown]
# ## The surfaces
#
# The loss of each final global model on the pooled training data, on a `grid x grid` grid
# of two filter-normalised random directions spanning [-1, 1] (one colour scale for all).

# %%
summary = show_global_surfaces(page, runs, scale, name="panel")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
