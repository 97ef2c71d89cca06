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
# # Table 12: general training hyper-parameters
#
# **What the paper lists.** The rounds, clients per round, local epochs E, client learning
# rate, weight decay, client momentum and batch size common to all methods, per data set
# and model: the CNN on CIFAR-10 and CIFAR-100, ResNet-18 with GroupNorm (printed in the
# CIFAR-100 block; the text also runs it on CIFAR-10 at alpha = 0.05) and MobileNetV2 on
# Landmarks-User-160k.
#
# **How it is made here.** Flcore's values are what `resolve_config` gives a FedAvg run at
# the `paper` scale with that data set and model -- the same presets every run goes
# through, so a mismatch here would be a mismatch in the runs. Flcore has the ResNet-18-GN
# model (`--model resnet18gn`) but no preset of its own for it: its presets are keyed by
# data set, so a ResNet run takes the CNN's values, and the row says so. Landmarks and
# MobileNetV2 are *not in flcore*. The published table is a data file
# (`flcore/papers/fedgloss/published/fedgloss-table-12.csv`).
#
# **How to rerun.** `flcore reproduce fedgloss-table-12` (no training).
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
from flcore.papers.fedgloss.config_tables import mark_missing_presets, table12_ours
from flcore.report import compare_settings
from flcore.report.page import Page
from flcore.reproduction.published import published, source

page = Page.from_parameters("fedgloss-table-12", globals())

# %% [markdown]
# ## Published beside flcore

# %%
paper = published("fedgloss-table-12")
ours = table12_ours(list(zip(paper["dataset"], paper["model"])))
table = mark_missing_presets(compare_settings(paper, ours, ["dataset", "model"]))
agree = table.loc[table["match"] == "yes", "dataset"] + " " + table.loc[table["match"] == "yes", "model"]
other = table.loc[table["match"] != "yes", "model"] + ": " + table.loc[table["match"] != "yes", "match"]
page.table(table, f"The paper's training hyper-parameters beside flcore's paper preset: {len(agree)} of "
                  f"{len(table)} rows agree ({', '.join(agree)}); {'; '.join(other)}.",
           downloads={"published": paper, "flcore": ours})
page.note(f"Published values: {source('fedgloss-table-12')['source']}.")
