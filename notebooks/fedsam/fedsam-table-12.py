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
# # Table 12: SWA hyper-parameters
#
# **What the paper lists.** The cycle length c, the client learning rates gamma_1 -> gamma_2 of the cyclical schedule and the round at which SWA starts, per data set.
#
# **How it is made here.** The published table is a data file transcribed from the paper (`flcore/papers/fedsam/published/fedsam-table-12.csv`). SWA values read *pending* while no SWA method is registered in flcore; a start round of 75% of the rounds is the paper's default. Flcore's values are what `resolve_config` gives a run
# at the `paper` scale -- the same presets every run goes through -- so a mismatch here
# would be a mismatch in the runs. Data sets flcore does not have (CIFAR-100-PAM,
# Landmarks-User-160k, Cityscapes, IDDA: not obtainable offline or not image
# classification on torchvision data) are marked *not in flcore*.
#
# **How to rerun.** `flcore reproduce fedsam-table-12` (no training; the scale only
# changes the second table).

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
from flcore.papers.fedsam.config_tables import swa_available, table12_ours
from flcore.report import compare_settings
from flcore.report.page import Page
from flcore.reproduction.published import published, source

page = Page.from_parameters("fedsam-table-12", globals())

# %% [markdown]
# ## Published beside flcore

# %%
paper = published("fedsam-table-12")
ours = table12_ours(list(paper["dataset"]))
table = compare_settings(paper, ours, ["dataset"])
agree = (table["match"] == "yes").sum()
page.table(table, f"SWA's cycle length, learning rates and start round, published beside flcore's paper preset: "
                  f"{agree} of {len(table)} rows agree.", downloads={"published": paper, "flcore": ours})

# %% [markdown]
# ## Notes

# %%
status = "registered" if swa_available() else "not registered yet (values pending)"
page.note(f"SWA in flcore: {status}. This page was built at the **{scale}** scale. "
          f"Published values: {source('fedsam-table-12')['source']}.")
