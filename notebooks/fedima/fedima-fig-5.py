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
# # Figure 5: interpolation between global models of two rounds
#
# **What the paper says.** FedIMA's Fig. 5 has three panels: (a) a schematic of IMA in the
# loss basin (no data), (b) the test loss and error of CIFAR-10 along the line between two
# global models of different rounds of cross-device FedAvg -- "lower loss/error points
# consistently exist within the global models' interpolation", the reason averaging
# historical global models helps -- and (c), whose content the text does not describe. Only
# (b) is made here; the rounds and the range of the interpolation were lost, and the
# figure has no numbers.
#
# **How it is made here.** The cross-device run of `flcore.papers.fedima.analysis`
# (shared with Fig. 1) saves the global model at 1/2 and at the end of training and at the
# last three rounds; `fedima_analysis.global_interpolation` (`flcore.analysis.interpolate`)
# evaluates `(1 - t) w^{a} + t w^{b}` for t in [-0.5, 1.5] on test samples for two pairs: the
# middle and the last round, and two rounds two apart at the end. Below the paper scale the
# data are MNIST-1D.
#
# **How to rerun.** `flcore reproduce fedima-fig-5 --scale small`; `--scale paper` on a GPU.

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
import pandas as pd

from flcore.papers.fedima import analysis as analysis
from flcore.report.page import Page

page = Page.from_parameters("fedima-fig-5", globals())
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
# ## (b) Between two global models

# %%
run_dir = runs["run_dir"].iloc[0]
stages, last = analysis.stage_rounds(scale), analysis.last_rounds(scale)
pairs = [(stages[1], stages[2]), (last[0], last[2])]
fig, axes = plt.subplots(1, len(pairs), figsize=(5 * len(pairs), 3.4))
rows = []
for ax, (a, b) in zip(axes, pairs):
    line = analysis.global_interpolation(run_dir, a, b, num=grid, samples=samples)
    ts, loss, error = line.ts.numpy(), line.loss.numpy(), 100 * line.error.numpy()
    ax.plot(ts, loss, "-o", color="C0", label="test loss")
    ax.set_ylabel("test loss")
    twin = ax.twinx()
    twin.plot(ts, error, "-s", color="C1", label="test error (%)")
    twin.set_ylabel("test error (%)")
    ax.set_xlabel(f"t  ((1 - t) round {a} + t round {b})")
    inside = (ts > 0) & (ts < 1)
    rows.append({"rounds": f"{a} -> {b}", "loss at t=0": loss[ts == 0][0], "loss at t=1": loss[ts == 1][0],
                 "lowest loss inside (0, 1)": loss[inside].min() if inside.any() else float("nan"),
                 "at t": float(ts[inside][loss[inside].argmin()]) if inside.any() else float("nan")})
table = pd.DataFrame(rows)
lower = int((table["lowest loss inside (0, 1)"] < table[["loss at t=0", "loss at t=1"]].min(axis=1)).sum())
page.figure(fig, f"Test loss and error between two global models; a point strictly between them is lower than both "
                 f"ends for {lower} of {len(table)} pairs.",
            alt="Test loss and error along the straight line between the global models of two rounds, extended "
                "half a segment on both sides, for two pairs of rounds.")
page.table(table, "Loss at both ends and the lowest loss strictly between them.")
page.findings([f"**What we found.** For {lower} of {len(table)} pairs a point between the two global models has a "
               "lower test loss than both (the paper: consistently)."])

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
