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
# # Figure 3: global loss surfaces of five methods
#
# **What the paper says.** Figure 3 draws the global loss surface on CIFAR-10 of the final
# models of FedAvg, FedSAM, FedGAMMA, FedSMOO and FedLESAM-D: "FedAvg, FedSAM and FedGAMMA can
# not achieve desirable flatness. FedSMOO achieves much flatter loss landscape while our
# FedLESAM-D further minimizes the global sharpness". The paper gives pictures, no numbers,
# and does not state the split or how the surfaces are drawn.
#
# **How it is made here.** The final global models of Table 2's runs at Dirichlet 0.1 (our
# choice: the setting of the paper's Fig. 2), 100 clients with 10% per round; surfaces by Li
# et al.'s filter-normalised random directions (the paper cites them) on the pooled training
# data (`flcore.papers.fedlesam.analysis`). A table reduces each surface to numbers so
# the methods can be ordered by flatness. Below the paper scale MNIST-1D stands in for
# CIFAR-10 and the grid is coarse.
#
# **How to rerun.** `flcore reproduce fedlesam-fig-3 --scale small`; `--scale paper` on a GPU.

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

page = Page.from_parameters("fedlesam-fig-3", globals())

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
