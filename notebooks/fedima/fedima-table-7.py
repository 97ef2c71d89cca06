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
# # Table VII: settings of the test experiments
#
# **What the paper says.** FedIMA's Table VII (App. E) gives the settings of its accuracy
# experiments (Table I) per data set: 100 clients (80 for PACS), 10% per round (20% for PACS),
# 5 local epochs, batch 50, lr 0.01 with momentum 0.9 decayed by 1% a round, 200-400 rounds,
# and IMA over a window of 5 global models from round 0.75 T on, with the client lr then
# decayed by 3% a round. The CIFAR rows each hold two settings (CNN and ResNet-18; VGG-11 and
# ResNet-18); they are one row per setting here.
#
# **How it is made here.** The published rows are a data file transcribed from the paper
# (`flcore/papers/fedima/published/fedima-table-7.csv`). Flcore's side is what the FedAvg+IMA
# run of each setting on the Table I page uses at the `paper` scale
# (`flcore.papers.fedima.runs.ima_run`: FedIMA's protocol; the IMA fields are the same for
# every `X+ima` method), so the table shows the settings the result runs train with. The
# paper's lr decays are written as 1 - gamma (flcore's `ima_gamma` 0.99 is the paper's 0.01).
# CIFAR-100 with ResNet-18 is not a Table I run here (its row label was lost); its column
# shows what the same protocol gives it. PACS is run with its own federation (80 clients, 16
# per round) on FedIMA's AlexNet-GN (`alexnet_gn`); Digit-Five is *not in flcore*.
#
# **How to rerun.** `flcore reproduce fedima-table-7` (no training; the scale changes nothing).

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
from flcore.papers.fedima.config_tables import show_table7
from flcore.report.page import Page
from flcore.reproduction.published import source

page = Page.from_parameters("fedima-table-7", globals())

# %% [markdown]
# ## Published beside flcore

# %%
table = show_table7(page)
page.note(f"Published values: {source('fedima-table-7')['source']}.")
