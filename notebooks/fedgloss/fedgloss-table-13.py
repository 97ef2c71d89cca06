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
# # Table 13: hyper-parameter search grids
#
# **What the paper lists.** For every method, data set and model, the values of each
# method hyper-parameter the authors searched (FedSam's rho, FedProx's mu, FedDyn's alpha,
# FedSpeed's rho, alpha and lambda, FedSmoo's rho and beta, FedGloSS's server radius
# rho_s, client radius rho, ADMM beta and warm-up length T_s). The values they chose are
# printed in bold -- a mark the text conversion lost, so the paper's choices are not
# known here.
#
# **How it is made here.** For each cell, flcore's preset for the method that implements
# the row (`fedsam`, `fedprox`, `feddyn`, `feddyn+sam`, `fedspeed`, `fedgamma`, `fedsmoo`,
# `fedgloss-sam`) as `resolve_config` gives it at the `paper` scale, at the paper's
# heterogeneous alphas (CIFAR-10: 0 and 0.05; CIFAR-100: 0 and 0.5; values that differ
# between them are shown as `a / b`), and whether it lies in the searched grid. Flcore has
# the ResNet-18-GN model but *no preset* for it (a ResNet run takes the CNN's values);
# Landmarks-User-160k is *not in flcore*. The published grids are a data file
# (`flcore/papers/fedgloss/published/fedgloss-table-13.csv`).
#
# **How to rerun.** `flcore reproduce fedgloss-table-13` (no training).
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
from flcore.papers.fedgloss.config_tables import show_table13
from flcore.report.page import Page
from flcore.reproduction.published import source

page = Page.from_parameters("fedgloss-table-13", globals())

# %% [markdown]
# ## The grids beside flcore's presets
#
# Each cell: the searched values, then flcore's preset and whether it is one of them.

# %%
paper, outside = show_table13(page)
page.note(f"Published values: {source('fedgloss-table-13')['source']}.")

# %% [markdown]
# ## Where a preset lies outside the grid
#
# The cells whose flcore value the paper did not search, with the config field that holds
# it. Flcore takes these radii from the FedSAM paper's Table 11 (FedSAM rho per data set
# and alpha), which applies to every method with a SAM client unless the method's own
# paper sets it; the FedGloSS paper fixed FedDyn+SAM's rho instead.

# %%
show = outside[["method", "hparam", "dataset", "model", "flcore_method", "flcore_field", "flcore"]].merge(
    paper[["method", "hparam", "dataset", "model", "grid"]], on=["method", "hparam", "dataset", "model"])
page.table(show, f"{len(show)} cells of flcore's presets lie outside the FedGloSS paper's grids"
                 + (f", all for {', '.join(sorted(set(show['flcore_method'])))}." if len(show) else "."))
