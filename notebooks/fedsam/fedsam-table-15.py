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
# # Table 15: SWA ablation, the round SWA starts
#
# **What the paper says.** Appendix E.3 starts SWA at 5, 25, 50 and 75 % of the rounds of
# FedAvg with 5 clients per round, "showing that a longer pre-training of the network leads
# to the greater effectiveness of this algorithm". The 5 % and 25 % rows are lost in the
# text; the 75 % rows are Table 2's FedAvg + SWA.
#
# **How it is made here.** FedAvg + SWA with `swa_start` at the fraction of the scale's
# rounds; 75 % is Table 2's run. Below the paper scale MNIST-1D stands in for both data sets
# and only alpha = 0 with the starts the text keeps (50 %, 75 %) is run.
#
# **How to rerun.** `flcore reproduce fedsam-table-15 --scale small`; `--scale paper` on a GPU.

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

page = Page.from_parameters("fedsam-table-15", globals())

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
settings = page.settings("the rows'", by=("dataset", "start_fraction"))

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
