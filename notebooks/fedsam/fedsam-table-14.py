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
# # Table 14: SWA ablation, weight averaging and cyclical learning rate
#
# **What the paper says.** Appendix E.3 separates the two parts SWA adds to FedAvg, FedSAM
# and FedASAM: the server-side average of the global models and the clients' cyclical
# learning rate (cycle c = 20 on CIFAR-100, 10 on CIFAR-10; c = 1 keeps it constant). "We
# discover that the server-side average gives the major contribution, which helps in
# stabilizing learning, while the cycle length does not particularly affect the results."
# Without averaging and with c = 1 it is the plain method.
#
# **How it is made here.** (averaging, cyclical) and (no averaging, constant) are Table 2's
# X + SWA and X runs; (averaging, constant) is X + SWA with `swa_cycle = 1`; (no averaging,
# cyclical) is `X+swalr`, the cyclical lr alone, evaluated on the global model. Below the
# paper scale MNIST-1D stands in for both data sets (c = 10), and only FedAvg at alpha = 0.5
# with 5 clients per round is run (the CPU budget; the CIFAR-100 block).
#
# **How to rerun.** `flcore reproduce fedsam-table-14 --scale small`; `--scale paper` on a GPU.

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

page = Page.from_parameters("fedsam-table-14", globals())

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
settings = page.settings("the rows'", by=("algorithm", "weights_avg", "lr_schedule"))

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
