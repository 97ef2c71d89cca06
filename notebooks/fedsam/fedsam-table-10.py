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
# # Table 10: training hyper-parameters
#
# **What the paper lists.** The client learning rate, batch size, weight decay, local epochs, client momentum, rounds and clients per round the paper found best for each data set.
#
# **How it is made here.** The published table is a data file transcribed from the paper (`flcore/papers/fedsam/published/fedsam-table-10.csv`). Flcore's values are what `resolve_config` gives a run
# at the `paper` scale -- the same presets every run goes through -- so a mismatch here
# would be a mismatch in the runs. Data sets flcore does not have (CIFAR-100-PAM,
# Landmarks-User-160k, Cityscapes, IDDA: not obtainable offline or not image
# classification on torchvision data) are marked *not in flcore*.
#
# **How to rerun.** `flcore reproduce fedsam-table-10` (no training; the scale only
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
from flcore.papers.fedsam.config_tables import scale_settings, table10_ours
from flcore.report import compare_settings
from flcore.report.page import Page
from flcore.reproduction.published import published, source

page = Page.from_parameters("fedsam-table-10", globals())

# %% [markdown]
# ## Published beside flcore

# %%
paper = published("fedsam-table-10")
ours = table10_ours(list(paper["dataset"]))
table = compare_settings(paper, ours, ["dataset"])
agree = (table["match"] == "yes").sum()
page.table(table, f"The paper's training hyper-parameters beside the values flcore's paper preset uses: "
                  f"{agree} of {len(table)} rows agree.", downloads={"published": paper, "flcore": ours})

# %% [markdown]
# ## What the scales change
#
# The `paper` scale is the table above. `small` and `smoke` keep the protocol's shape on
# MNIST-1D (CIFAR-10 alpha = 0 setting shown); the book's other pages run at the scale
# they were built with.

# %%
page.note(f"This page was built at the **{scale}** scale. Published values: "
          f"{source('fedsam-table-10')['source']}.")
scales = scale_settings()
page.table(scales, "What each scale uses for the CIFAR-10 alpha = 0 setting: only the `paper` row is the paper's protocol; `small` and `smoke` run MNIST-1D with flcore's own learning settings.")
