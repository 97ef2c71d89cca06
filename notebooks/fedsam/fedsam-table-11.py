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
# # Table 11: FedSAM and FedASAM hyper-parameters
#
# **What the paper lists.** SAM's neighbourhood size rho, and ASAM's rho and eta, per data set and Dirichlet alpha (the same for every number of clients per round).
#
# **How it is made here.** The published table is a data file transcribed from the paper (`flcore/papers/fedsam/published/fedsam-table-11.csv`). Flcore's values are what `resolve_config` gives a run
# at the `paper` scale -- the same presets every run goes through -- so a mismatch here
# would be a mismatch in the runs. Data sets flcore does not have (CIFAR-100-PAM,
# Landmarks-User-160k, Cityscapes, IDDA: not obtainable offline or not image
# classification on torchvision data) are marked *not in flcore*.
#
# **How to rerun.** `flcore reproduce fedsam-table-11` (no training; the scale only
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
from flcore.papers.fedsam.config_tables import scale_settings, table11_ours
from flcore.report import compare_settings
from flcore.report.page import Page
from flcore.reproduction.published import published, source

page = Page.from_parameters("fedsam-table-11", globals())

# %% [markdown]
# ## Published beside flcore

# %%
paper = published("fedsam-table-11")
ours = table11_ours(list(zip(paper["dataset"], paper["alpha"])))
table = compare_settings(paper, ours, ["dataset", "alpha"])
agree = (table["match"] == "yes").sum()
page.table(table, f"SAM's rho and ASAM's rho and eta per data set and alpha, published beside flcore's paper "
                  f"preset: {agree} of {len(table)} rows agree.", downloads={"published": paper, "flcore": ours})

# %% [markdown]
# ## What the scales change
#
# MNIST-1D is not in the paper: the `small` and `smoke` scales use rho = 0.05 for SAM and
# (rho, eta) = (0.5, 0.2) for ASAM at every alpha (flcore's choice, in its presets).

# %%
page.note(f"This page was built at the **{scale}** scale. Published values: "
          f"{source('fedsam-table-11')['source']}.")
scales = scale_settings()
page.table(scales, "What each scale uses for the CIFAR-10 alpha = 0 setting: only the `paper` row is the paper's protocol; `small` and `smoke` run MNIST-1D with flcore's own learning settings.")
