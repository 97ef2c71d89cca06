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
# # Figure 9: error planes through global models, cross-device and cross-silo
#
# **What the paper says.** FedIMA's Table VI lists Fig. 9 with both the cross-device
# (Fig. 1) and cross-silo (Fig. 8) settings, but the text never describes it and its caption
# was lost. Here it is read as the companion of Fig. 1's fourth column in both settings:
# the test loss and error on the plane through the global models of the last three rounds,
# whose average (an IMA-like model) should lie nearer the basin's lowest point. This reading
# is ours; the figure has no numbers.
#
# **How it is made here.** The runs of Fig. 8 (`flcore.papers.fedima.analysis`);
# `fedima_analysis.global_plane` through the last three global models. Below the paper scale
# the data are MNIST-1D.
#
# **How to rerun.** `flcore reproduce fedima-fig-9 --scale small`; `--scale paper` on a GPU.

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

page = Page.from_parameters("fedima-fig-9", globals())
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
panels = []
for row in runs.itertuples():
    last = analysis.last_rounds(scale, row.fl)
    panels.append((row.fl, f"{row.fl}, rounds {last[0]}-{last[-1]}",
                   analysis.global_plane(row.run_dir, last, grid=grid, samples=samples)))
fig, table = analysis.draw_planes(panels)
lower = int((table["mean loss"] < table["best model loss"]).sum())
page.figure(fig, f"Test loss and error on planes through the last three global models; their average is below "
                 f"the best of them in {lower} of {len(table)} settings.",
            alt="Contour plots of test loss and error on the plane through the last three global models, for cross-device "
                "and cross-silo FedAvg, with the models and their average marked.")
page.table(table, "Loss at the models, at their average, and how far the average sits above the plane's "
                           "lowest point.")
page.findings(["**What we found.** The average of the last three global models is below the best of them in "
               f"{lower} of {len(table)} "
               "settings (the paper, Fig. 1: it is nearer the lowest point)."])

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
