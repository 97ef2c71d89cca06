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
# # Table 8: wall-clock seconds per communication round
#
# **What the paper says.** FedLESAM's Table 8 (App. E.3) gives the average time between two
# communications of eight methods (setting and GPU not stated): FedAvg 20.34 s, FedLESAM
# 20.99 s (+3%), FedLESAM-S and FedLESAM-D about 25.8 s, and the SAM-based methods FedSAM,
# MoFedSAM, FedGAMMA and FedSMOO 25.7-29.9 s. FedLESAM takes one backpropagation per local
# step, as FedAvg does; the SAM-based methods take two.
#
# **How it is made here.** Seconds depend on the machine, so this page compares *ratios to
# FedAvg*, measured on the machine that trained the runs. Every run trained alone records
# in its status the mean and spread of its training rounds' wall-clock time (local training,
# aggregation and the server step; not the evaluations) -- `flcore.sim.round_driver.RoundTiming`.
# The runs are Table 2's at the Dirichlet 0.1 setting, 100 clients with 10% per round
# (MNIST-1D and 5 clients per round below the paper scale); a method's number is the mean over
# its timed runs, the seeds the claims' verdicts read (three at `small`). Runs trained earlier on another
# machine keep that machine's times: rebuild the store to time them together. Where the
# book is built on a shared machine, other work running at the same time adds noise.
#
# **How to rerun.** `flcore reproduce fedlesam-table-8 --scale small`; `--scale paper` on a GPU.

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
from flcore.papers.fedlesam.results import show_seconds_per_round
from flcore.report.page import Page

page = Page.from_parameters("fedlesam-table-8", globals())

# %% [markdown]
# ## The runs
#
# Finished runs come from the store, missing ones are trained now.

# %%
runs = page.train()  # the artifact's runs and the seeds the verdicts read

# %%
settings = page.settings("the methods'", by=("algorithm",), grid=("seed",))

# %% [markdown]
# ## Published beside ours
#
# Seconds per round and the ratio to FedAvg. Ours: per method the mean ± sd (n) of the
# seconds per round over its timed runs (trained alone), the seeds the claims' verdicts read;
# the spread is the machine's timing noise between runs. The ratio is the method's mean over
# FedAvg's.

# %%
table = show_seconds_per_round(page, runs, scale)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
verdicts = page.check_claims()
page.show_claims()
