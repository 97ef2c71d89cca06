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
# # Table V: baseline hyper-parameters
#
# **What the paper says.** FedIMA's Table V (App. D) gives the extra hyper-parameters of its
# eight baselines and where their implementations come from. The text conversion lost the
# header and every symbol; what survived is four values, "= 0.01, = 0.9, = 0.99, = 0.001" --
# FedAdam/FedYogi's server lr, two decay parameters and degree of adaptivity, which App. D
# names in that order -- and the reference row. The FedProx/FedFA coefficient (App. D: the
# best of 0.1, 0.01 and 0.001), FedASAM's two values and FedGMA's masking threshold were
# lost; FedAvg and FedNova need no extra hyper-parameter.
#
# **How it is made here.** The published values are a data file transcribed from the paper
# (`flcore/papers/fedima/published/fedima-table-5.csv`; lost values are empty with a note).
# Flcore's values are what `resolve_config` gives each baseline at the `paper` scale
# (CIFAR-10) -- the values its runs use.
#
# **How to rerun.** `flcore reproduce fedima-table-5` (no training; the scale changes nothing).

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
from flcore.papers.fedima.config_tables import show_table5
from flcore.report.page import Page
from flcore.reproduction.published import source

page = Page.from_parameters("fedima-table-5", globals())

# %% [markdown]
# ## Published beside flcore

# %%
table = show_table5(page)
page.note(f"Published values: {source('fedima-table-5')['source']}.")
