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
# # Figure 1: loss and error planes through client and global models
#
# **What the paper says.** FedIMA's Fig. 1 draws the test loss (top row) and test error
# (bottom row) of CIFAR-10 on the plane through three models (black triangles; their average
# is the white cross): three client models of one round at three stages of cross-device
# FedAvg training (columns 1-3), and the global models of rounds 398, 399 and 400 (column
# 4). Its findings: the average of the client models always lies lower than each of them --
# the clients sit on the walls of one basin around the global model -- and the average of
# three consecutive global models is closer to the basin's lowest point than any of them,
# which motivates IMA. The stage rounds and the contour levels were lost in the text; the
# figure has no numbers.
#
# **How it is made here.** The cross-device run of
# `flcore.papers.fedima.analysis` saves its models at 1/8, 1/2 and the end of
# training and at the last three rounds; each panel is
# `fedima_analysis.client_plane` / `global_plane` (`flcore.analysis.loss_plane`) on test
# samples, on a coarse grid. Below the paper scale the data are MNIST-1D.
#
# **How to rerun.** `flcore reproduce fedima-fig-1 --scale small`; `--scale paper` on a GPU.

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
from flcore.papers.fedima import analysis as analysis
from flcore.report.page import Page

page = Page.from_parameters("fedima-fig-1", globals())
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
# ## The planes

# %%
run_dir = runs["run_dir"].iloc[0]
stages = analysis.stage_rounds(scale)
planes = [(f"clients, round {r}", analysis.client_plane(run_dir, r, grid=grid, samples=samples)) for r in stages]
last = analysis.last_rounds(scale)
planes.append((f"global, rounds {last[0]}-{last[-1]}", analysis.global_plane(run_dir, last, grid=grid,
                                                                            samples=samples)))
fig, table = analysis.draw_planes([(title, title, plane) for title, plane in planes], key="panel", gap=False,
                                  field_prefix="test ")
lower = int((table["mean loss"] < table["best model loss"]).sum())
page.figure(fig, f"Test loss (left) and error (right) on planes through three models (triangles; cross: their "
                 f"average). The average is below the best of the three models in {lower} of {len(table)} panels.",
            alt="Eight contour plots: test loss and error on the plane through three client models at three "
                "training stages and through the last three global models, with the models and their mean marked.")
page.table(table, "Loss at the three models, at their average (cross) and the lowest loss of the plane.")
page.findings([f"**What we found.** The average of the three models has a lower test loss than the best of "
               f"them in {lower} of {len(table)} panels (the paper: in every panel)."])

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
