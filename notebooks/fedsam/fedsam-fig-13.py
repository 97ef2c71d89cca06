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
# # Figure 13: train loss around three local models
#
# **What the paper says.** Appendix Figure 13 of the FedSAM paper draws the train
# cross-entropy on the plane through three clients' models after local training, after
# 20k rounds on CIFAR-100, at alpha = 0 (a), 0.5 (b) and 1000 (c) (FedAvg, presumably).
# With Figure 2 it shows that with heterogeneous data the clients' models sit far apart in
# different loss regions, while homogeneous clients are "connected through a path of low
# error". The figure has no numbers.
#
# **How it is made here.** FedAvg with the CIFAR-100 protocol (5 clients per round)
# trained as *recorded* runs, which save the last round's global model and the round's
# client models after local training; the plane goes through the first three of that
# round's five clients (the paper does not say which clients). Planes after Garipov et al.
# (the paper's App. C.3): 21 x 21 points at the `paper` scale (fewer below) over the
# models' extent plus a 20% margin. The train loss is measured on a fixed subset of the
# whole training set (all clients' data), as the paper's "train loss". Below the `paper`
# scale MNIST-1D stands in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedsam-fig-13 --scale small`; `--scale paper` on a
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

page = Page.from_parameters("fedsam-fig-13", globals())
field = "loss"  # what the panels show: "loss" (train loss) or "error" (test error)

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
page.table(runs[["algorithm", "alpha", "record", "status", "run_id"]],
           f"The recorded FedAvg runs of the figure: {int((runs['status'] == 'finished').sum())} of {len(runs)} "
           "finished.")

# %% [markdown]
# ## The planes
#
# Triangles: the three clients' models after the last round's local training; white
# cross: their average.

# %%
values = fedsam_analysis.show_client_planes(page, runs, scale, field, device=page.analysis_device,
                                            data_root=data_root)

# %% [markdown]
# ## What we found

# %%
page.findings(fedsam_analysis.client_plane_findings(values, field), empty="No finished runs to draw.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
