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
# # Figure 4: top Hessian eigenvalue of each client's model as rounds pass
#
# **What the paper says.** Figure 4 of the FedSAM paper shows, as heat-maps over rounds,
# the top Hessian eigenvalue lambda_max^k of each client's model after local training,
# measured on that client's own data, for FedAvg and FedASAM at alpha = 0 and 1k
# (CIFAR-100). At alpha = 0 "the clients locally reach wide minima (low Hessian maximum
# eigenvalue, lambda_max^k < 14) due to the simplicity of the learned task", "but the
# average of the distinct updates drives the model towards sharper minima" (the global
# model's lambda_max is about 94, Table 1); at alpha = 1k the local lambda_max decreases
# as the rounds pass; with ASAM "flat minima are achieved from the very beginning of the
# training". The figure has no numbers.
#
# **How it is made here.** The configurations of Table 2 (CIFAR-100 protocol, 5 clients
# per round) trained again as *recorded* runs: every `probe_every` rounds the probe
# `client_lambda_max` computes, for each of the round's five clients, the top eigenvalue
# of the Hessian of its local loss at its model after local training (power iteration,
# at most 20 products, the paper's method), and stores it in the run's metrics. A heat-map
# column is one probed round; its rows are that round's sampled clients (different
# clients in every column: 5 of 100 take part). The paper's checkpoints are rounds 1k, 2k,
# 5k, 10k, 15k and 20k; we probe every `probe_every` rounds (the runs table says how
# often). A recorded run trains alone, so below the `paper` scale only the FedAvg panels
# are trained (the budget of the book); the FedASAM panels need `--scale paper`. Below the
# `paper` scale MNIST-1D stands in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedsam-fig-4 --scale small`; `--scale paper` on a
# GPU.

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
from flcore.papers.fedsam import analysis as fedsam_analysis
from flcore.report.page import Page

page = Page.from_parameters("fedsam-fig-4", globals())
panels = fedsam_analysis.FIG4_PANELS

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
missing = fedsam_analysis.show_recorded_runs(page, runs, scale, panels)

# %% [markdown]
# ## The heat-maps
#
# One panel per run: columns are the probed rounds, rows the round's sampled clients.

# %%
rows = fedsam_analysis.show_client_eigenvalues(page, runs, scale, store=store, device=page.analysis_device,
                                                data_root=data_root)

# %% [markdown]
# ## What we found

# %%
page.findings(fedsam_analysis.client_eigenvalue_findings(rows, missing, scale), empty="No finished runs to draw.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
