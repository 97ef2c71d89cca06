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
# # Figure 6: global loss surfaces on the pathological split
#
# **What the paper says.** Figure 6 (App. E.2) draws the global loss surfaces of FedAvg,
# FedSAM, FedGAMMA, MoFedSAM, FedSMOO and FedLESAM-D on CIFAR-10 "under Pathological splits
# with a coefficient of 3" (3 classes per client): FedSMOO and FedLESAM-D "achieve the much
# flatter loss landscape". Pictures only, no numbers.
#
# **How it is made here.** One run per method with `partition = "shards"`,
# `classes_per_client = 3` (label-sorted shards; the paper's code deals classes at random:
# *Known differences*), 100 clients with 10% per round; surfaces as on Figure 3's page.
# Below the paper scale MNIST-1D stands in for CIFAR-10 and the runs are 80 rounds long
# (labelled `rounds`), to keep the book's budget.
#
# **How to rerun.** `flcore reproduce fedlesam-fig-6 --scale small`; `--scale paper` on a GPU.

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

page = Page.from_parameters("fedlesam-fig-6", globals())

# %% [markdown]
# ## The runs
#
# Finished runs come from the store, missing ones are trained now.

# %%
runs = page.train()

# %% [markdown]
# ## The surfaces
#
# The loss of each final global model on the pooled training data, on a `grid x grid` grid
# of two filter-normalised random directions spanning [-1, 1] (one colour scale for all).

# %%
summary = show_global_surfaces(page, runs, scale)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
