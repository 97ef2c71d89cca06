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
# # Figure 3: Locality and test error over rounds
#
# **What the paper says.** FedIMA's Fig. 3 follows the Locality factor of its loss
# decomposition, the largest distance `max_k |w_k - w_g|` between a client model and the
# global model, and the global model's test error over cross-silo FedAvg training on
# CIFAR-10, with and without lr decay. Its finding: without decay the clients drift farther
# as training goes on and the error stalls; with decay Locality shrinks and the error keeps
# falling -- the reason for IMA's "mild client exploration". The figure has no numbers; the
# reference model (the round's FMA output) is our choice.
#
# **How it is made here.** The cross-silo runs of `flcore.papers.fedima.analysis`
# (shared with Figs. 2 and 4); Locality is measured against the round's FMA model from the
# saved snapshots (`flcore.analysis.decomposition.client_global_distance`). Below the paper
# scale the data are MNIST-1D.
#
# **How to rerun.** `flcore reproduce fedima-fig-3 --scale small`; `--scale paper` on a GPU.

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
import matplotlib.pyplot as plt

from flcore.papers.fedima import analysis as analysis
from flcore.report.page import Page

page = Page.from_parameters("fedima-fig-3", globals())
grid, samples = analysis.GRID[scale], analysis.SAMPLES[scale]

# %% [markdown]
# ## The runs
#
# FedAvg runs that save the global and client models of chosen rounds (snapshots); they are
# trained once and shared by the analysis figures.

# %%
runs = page.runs()
page.table(runs[[c for c in ("fl", "lr_decay", "partition", "model", "status", "run_id") if c in runs]],
           f"{len(runs)} run(s) with snapshots make this figure at the {scale} scale.")

# %% [markdown]
# ## The factors over rounds

# %%
factors = analysis.decomposition_by_decay(runs, samples=samples)
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
for decay, block in factors.groupby("lr decay", sort=False):
    axes[0].plot(block["round"], block["locality"], "-o", label=f"lr decay: {decay}")
    axes[1].plot(block["round"], 100 * block["test_error"], "-s", label=f"lr decay: {decay}")
axes[0].set_ylabel("Locality  max_k |w_k - w_g|")
axes[1].set_ylabel("test error (%)")
for ax in axes:
    ax.set_xlabel("round")
    ax.legend(fontsize=8)
end = factors.groupby("lr decay").tail(1).set_index("lr decay")
with_decay = end.index[end.index != "none"]
smaller = bool(len(with_decay) and end.loc[with_decay[0], "locality"] < end.loc["none", "locality"])
page.figure(fig, "Locality (left) and the global model's test error (right) over rounds; at the last snapshot "
                 f"Locality is {'smaller' if smaller else 'not smaller'} with lr decay.",
            alt="Line plots of the largest client-to-global distance and of the test error against round, with "
                "and without lr decay.")
page.table(factors[["lr decay", "round", "locality", "mean_distance", "test_error"]], "The plotted values.")
page.findings([f"**What we found.** With lr decay the final Locality is {'smaller' if smaller else 'not smaller'} "
               "than without (the paper: smaller)."])

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
