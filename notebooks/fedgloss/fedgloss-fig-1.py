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
# # Figure 1: global loss landscapes of FedAvg and FedSAM
#
# **What the paper says.** Figure 1 motivates the paper: the loss landscapes of the final global CNN of FedAvg
# (solid) and FedSAM (net) on CIFAR-10 (alpha 0, 0.05) and CIFAR-100 (alpha 0, 0.5). FedSAM's
# surface is flatter and lower than FedAvg's at the milder heterogeneity, but the advantage
# shrinks as heterogeneity grows (alpha = 0): local flatness alone does not make the global
# model flat. The paper gives surfaces only, no numbers.
#
# **How it is made here.** The final global models of the `gloss-cnn-main` runs (each
# method's preset, 5 clients per round) on the four CNN settings (at `small`: MNIST-1D at alpha 0 and 0.05; at `smoke`: alpha 0). Each surface is
# `L(w + a d1 + b d2)` for `a, b` in `[-1, 1]` on the pooled training data, along two
# random directions drawn once from the run's seed and filter-normalised to each model
# (Li et al. 2018), so every method of a panel is seen on the same random plane
# (`flcore.analysis.landscape.shared_direction_landscapes`); 21 x 21 points at the paper
# scale, 11 x 11 at `small`, 5 x 5 at `smoke`. The table under the figure sums each
# surface up by the loss at the model and the mean rise of the loss over the grid (lower:
# flatter and lower region).
#
# **How to rerun.** `flcore reproduce fedgloss-fig-1 --scale small`; `--scale paper` on a GPU.

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
seeds = [0]  # the paper reports 3 seeds; one below the paper scale
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
workers = None  # runs trained at once on a CPU; None: one per core
data_root = "data"  # CIFAR folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
from flcore.papers.fedgloss import analysis as fa
from flcore.report.page import Page

page = Page.from_parameters("fedgloss-fig-1", globals())
NET, SOLIDS = "FedSAM", ['FedAvg']

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
page.table(runs[["dataset", "algorithm", "alpha", "seed", "status", "mean_last_100", "run_id"]],
           f"The runs whose final global models are drawn; {int((runs['status'] == 'finished').sum())} of "
           f"{len(runs)} finished.")

# %% [markdown]
# ## The landscapes
#
# One panel per setting and compared method: FedSAM as a net over FedAvg as a solid
# surface (first seed).

# %%
finding = fa.show_net_over_solid(page, runs, NET, SOLIDS, scale)

# %% [markdown]
# ## What we found

# %%
lines = [f"At the **{scale}** scale {finding}; the paper shows {NET} in the flatter, lower region."]
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
