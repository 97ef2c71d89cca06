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
# # Table 3: model transmissions per round
#
# **What the paper says.** FedGF's Table 3 counts, per round and participating client, how
# many model-sized vectors go up (client to server) and down (server to client): FedAvg and
# FedSAM 1 + 1, MoFedSAM and FedGF 1 + 2 (the server also sends its momentum, or FedGF's
# perturbed global model), FedSMOO and FedGAMMA 2 + 2 (parameters and perturbations or control
# variates both ways).
#
# **How it is made here.** The published table is a data file transcribed from the paper
# (`flcore/papers/fedgf/published/fedgf-table-3.csv`). Flcore's values are the
# uploads and downloads per round of each method, read off the parts its recipe builds
# (`flcore.config.traffic_of`: the model, plus the model-sized vectors its parts declare they
# send, checked against real rounds) -- the same parts the engine runs. FedSMOO is flcore's `fedsmoo-noreg`, the variant
# the FedGF paper runs (its footnote 3); it communicates as much as `fedsmoo`.
#
# **How to rerun.** `flcore reproduce fedgf-table-3` (no training; the scale changes nothing).

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
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
from flcore.papers.fedgf.method_costs import FEDGF_METHODS, show_transmissions
from flcore.report.page import Page
from flcore.reproduction.method_costs import methods_behind
from flcore.reproduction.published import source

page = Page.from_parameters("fedgf-table-3", globals())

# %% [markdown]
# ## Published beside flcore

# %%
table = show_transmissions(page)

# %% [markdown]
# ## Where flcore's counts come from
#
# Each row names the registered method, its parts (algorithms.md 7.1: P = perturbation,
# C = correction, S = server step) and the per-client state it keeps across rounds.

# %%
evidence = methods_behind(list(FEDGF_METHODS), FEDGF_METHODS)
page.table(evidence, "The flcore methods behind the counts above: the vectors beyond the model that a method sends "
                     "are its parts' broadcasts (MoFedSAM's momentum, FedGF's perturbed global model) and "
                     "uploads (FedSMOO's perturbation, FedGAMMA's control variate).")
page.note(f"Published values: {source('fedgf-table-3')['source']}.")
