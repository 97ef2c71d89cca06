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
# # Figure 10: loss planes under other label skews and models
#
# **What the paper says.** FedIMA's Fig. 10 (App. B) repeats Fig. 1's planes through three
# client models for other models (CNN, ResNet-18), data sets (FMNIST, CIFAR-10) and two
# label skews: "regardless of the specific FL setup, FMA ensures that client and global
# models reside within a common basin". The label-skew values were lost; the figure has no
# numbers.
#
# **How it is made here.** Cross-device runs of `flcore.papers.fedima.analysis` with
# two class shards per client and with Dirichlet alpha = 0.1; at the `paper` scale with the
# CNN and ResNet-18-GN on CIFAR-10 and FedIMA's CNN on Fashion-MNIST (`fmnist_cnn`), below it
# on MNIST-1D with its model only. The planes pass through three client models of the last round.
#
# **How to rerun.** `flcore reproduce fedima-fig-10 --scale small`; `--scale paper` on a GPU.

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

page = Page.from_parameters("fedima-fig-10", globals())
grid, samples = analysis.GRID[scale], analysis.SAMPLES[scale]

# %% [markdown]
# ## The runs
#
# FedAvg runs that save the global and client models of chosen rounds (snapshots); they are
# trained once and shared by the analysis figures.

# %%
runs = page.runs()
page.table(runs[[c for c in ("fl", "lr_decay", "partition", "dataset", "model", "status", "run_id") if c in runs]],
           f"{len(runs)} run(s) with snapshots make this figure at the {scale} scale.")

# %% [markdown]
# ## The planes

# %%
panels = []
for row in runs.itertuples():
    last = analysis.stage_rounds(scale, row.fl)[-1]
    setting = f"{row.dataset} {row.model}, {row.partition}" if page.stand_in.is_paper else f"{row.model}, {row.partition}"
    panels.append((setting, setting, analysis.client_plane(row.run_dir, last, grid=grid, samples=samples)))
fig, table = analysis.draw_planes(panels)
lower = int((table["mean loss"] < table["best model loss"]).sum())
page.figure(fig, f"Test loss and error on planes through three client models of the last round; the average is below "
                 f"the best client in {lower} of {len(table)} settings.",
            alt="Contour plots of test loss and error on the plane through three client models, for each model and label skew, "
                "with the models and their average marked.")
page.table(table, "Loss at the models, at their average, and how far the average sits above the plane's "
                           "lowest point.")
page.findings([f"**What we found.** The clients' average is below the best client in {lower} of {len(table)} "
               "settings (the paper: in every setting)."])

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
