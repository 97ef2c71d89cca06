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
# # Figure 8: parameter norm over rounds
#
# **What the paper says.** Figure 8 follows the norm of the global model ||w^t||_2 over the rounds for the
# SAM-based methods (ResNet-18-GN on CIFAR-10 alpha = 0.05 and CIFAR-100 alpha = 0.5; the
# method list is inferred: FedSAM, FedDyn+SAM, FedSMOO, FedGloSS): SAM keeps the norm down
# and so avoids the "parameter explosion" that makes ADMM (FedDyn) fail under strong
# heterogeneity. The paper gives curves only, no numbers.
#
# **How it is made here.** At the paper scale, ResNet-18-GN runs of the four methods (10 clients per
# round, Table 12's momentum 0.7 and weight decay 1e-5) recording the `param_norm` probe.
# Below it no ResNet is trained: the recorded MNIST-1D runs at alpha = 0 of the same four
# methods (the runs of Table 1, which record `param_norm` at the evaluation rounds) stand
# in, with the CNN.
#
# **How to rerun.** `flcore reproduce fedgloss-fig-8 --scale small`; `--scale paper` on a GPU.

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

page = Page.from_parameters("fedgloss-fig-8", globals())
PROBE = "param_norm"

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
page.table(runs[["dataset", "algorithm", "alpha", "seed", "status", "mean_last_100", "run_id"]],
           f"The recorded runs; {int((runs['status'] == 'finished').sum())} of {len(runs)} finished.")

# %% [markdown]
# ## ||w^t||_2 over rounds

# %%
finding = fa.show_probe_curves(page, runs, seeds[0], PROBE, "||w^t||_2", scale, store=store)

# %% [markdown]
# ## What we found

# %%
lines = [f"At the **{scale}** scale, ||w^t||_2 {finding}."]
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
