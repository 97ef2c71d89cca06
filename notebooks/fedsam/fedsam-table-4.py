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
# # Table 4: FedAvg, FedSAM, FedASAM and SWA with Mixup and Cutout on CIFAR-100
#
# **What the paper says.** Table 4 of the FedSAM paper adds the strong augmentations Mixup
# (Beta(1, 1), one mixing weight per batch) and Cutout (8x8 squares) to FedAvg, FedSAM, FedASAM and their
# server-side SWA versions on CIFAR-100 (alpha x 5/10/20 clients per round). Its message:
# "Surprisingly, both lead to worse performances across all algorithms, so instead of helping
# the model to generalize, they further slow down training. When combined with our methods,
# the performance improves in the heterogeneous scenarios w.r.t. the corresponding baseline
# (FedAvg + data augmentation) and SWA brings a significant boost."
#
# **How it is made here.** The runs are Table 2's runs with `mixup_alpha = 1` or `cutout_size`
# set (rows *none* are Table 2's own runs, shown for reference; Table 4 itself does not print them).
# Below the paper scale MNIST-1D stands in for CIFAR-100; Cutout zeroes a window of 8 of the 40
# positions of a signal; only alpha = 0 with 5 clients per round and the rows FedAvg and
# FedASAM + SWA are run (the CPU budget), so this table and the other augmentation table
# (fedsam-table-17) read the same runs. The page compares the *orderings* of the rows there, and
# the numbers at the paper scale.
#
# **How to rerun.** `flcore reproduce fedsam-table-4 --scale small` (minutes on a CPU); `--scale paper`
# on a GPU.

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
from flcore.papers.fedsam import results as results
from flcore.report.page import Page

page = Page.from_parameters("fedsam-table-4", globals())

# %% [markdown]
# ## The runs
#
# One row per cell of the table at this scale: finished runs come from the store, missing
# ones are trained now (runs shared with other tables are the same runs).

# %%
runs = page.train()  # the artifact's runs and the seeds the verdicts read

# %% [markdown]
# ## Settings used
#
# What every run shares, then what differs between the rows.

# %%
settings = page.settings("the rows'", by=("augmentation", "algorithm"))

# %% [markdown]
# ## Published beside ours
#
# Accuracy (%): the paper's, ours at this scale and, at the `paper` scale only, the
# difference (ours - paper). A dagger marks a diverged run, shown at chance accuracy as the
# paper does; a *paper* cell the paper's text lost shows –, and *not run* marks a
# published cell this scale does not run.

# %%
comparison = results.show_comparison(page, runs, scale)

# %% [markdown]
# ## Orderings
#
# Within each block of the table, the rows from best to worst as the paper ranks them and
# as our runs do, and Kendall's tau between the two rankings (1: the same order, 0:
# unrelated, -1: reversed).

# %%
mean_tau = results.show_orderings(page, comparison)

# %% [markdown]
# ## What we found

# %%
verdicts = results.show_table_findings(page, mean_tau)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
