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
# # Figure 6: loss surfaces of FedGF, local and global
#
# **What the paper says.** Figure 6 draws for FedGF what Figure 2 draws for FedSAM on
# CIFAR-100 at alpha = 0: the loss surface around a local model on its own loss F_i and
# around the global model on the global loss F. FedGF's local model is moderately flat, and
# its global model is flatter than FedSAM's -- the discrepancy is relieved. The paper gives
# the surfaces only.
#
# **How it is made here.** The run is Table 1's FedGF run at alpha = 0 (5 clients per
# round). `flcore.papers.fedgf.analysis.loss_surfaces` continues it by one round from its
# stored final state to obtain the round's local models, and evaluates 2-D surfaces along two
# filter-normalised random directions (Li et al. 2018): around the first client's local model
# on its own data (F_i) and on the pooled training data (F), and around the final global model
# on F. F is evaluated on a seeded subset of the pooled client data; the grid is coarse below
# the paper scale.
#
# **How to rerun.** `flcore reproduce fedgf-fig-6 --scale small`; `--scale paper` on a GPU.

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
from flcore.papers.fedgf import analysis as fedgf_analysis
from flcore.report.page import Page

page = Page.from_parameters("fedgf-fig-6", globals())
METHOD = "FedGF"

# %% [markdown]
# ## The run, its surfaces and the figure

# %%
runs = page.runs()
rises = fedgf_analysis.show_loss_surfaces(page, runs, scale, METHOD)

# %% [markdown]
# ## What we found

# %%
page.note(" ".join(fedgf_analysis.surface_findings(rises, scale, METHOD)))

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
