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
# # Figure 9: between NaiveFedGloSS and FedGloSS models
#
# **What the paper says.** Figure 9 interpolates between the final global models of
# NaiveFedGloSS (exact server-side SAM, two exchanges per round) and FedGloSS (the
# previous round's pseudo-gradient as the ascent direction), `w(g) = g w_FedGloSS +
# (1 - g) w_Naive` for `g` in `[-1, 2]`, on CIFAR-10 and CIFAR-100 (CNN): the loss has no
# barrier between them -- the two models lie in the same basin, so the approximation finds
# the solution the exact method finds. The paper gives curves only, no numbers; it states
# neither alpha nor whether the loss is on the training or the test set.
#
# **How it is made here.** NaiveFedGloSS and FedGloSS-SAM runs of the same seed at
# alpha = 0 (each method's preset, 5 clients per round), their final global models, loss
# and error along the line on the training data and on the test set
# (`flcore.analysis.interpolation.interpolate`; a subset below the paper scale). The
# barrier is the largest rise of the curve above the straight chord between the two ends
# (`g` in `[0, 1]`).
#
# **How to rerun.** `flcore reproduce fedgloss-fig-9 --scale small`; `--scale paper` on a GPU.

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
import matplotlib.pyplot as plt
import pandas as pd

from flcore.papers.fedgloss import analysis as fa
from flcore.report.page import Page

page = Page.from_parameters("fedgloss-fig-9", globals())
data_name = page.stand_in.short_name("CIFAR")

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
page.table(runs[["dataset", "algorithm", "alpha", "seed", "status", "mean_last_100", "run_id"]],
           f"NaiveFedGloSS and FedGloSS-SAM runs; {int((runs['status'] == 'finished').sum())} of {len(runs)} finished.")

# %% [markdown]
# ## Loss along the line

# %%
finished = runs[(runs["status"] == "finished") & (runs["seed"] == seeds[0])]
curves, rows = {}, []
for dataset, group in finished.groupby("dataset", sort=False):
    by = group.set_index("algorithm")["run_dir"]
    if {"NaiveFedGloSS", "FedGloSS-SAM"} <= set(by.index):
        curves[dataset] = fa.naive_interpolation(by["NaiveFedGloSS"], by["FedGloSS-SAM"])
        for split, line in curves[dataset].items():
            rows.append({"dataset": dataset, "split": split, "loss at NaiveFedGloSS": float(line.loss[line.ts == 0][0]),
                         "loss at FedGloSS": float(line.loss[line.ts == 1][0]), "barrier": round(line.barrier, 4),
                         "error barrier": None if line.barrier_error is None else round(line.barrier_error, 4)})
barriers = pd.DataFrame(rows)
figure, axes = plt.subplots(1, max(1, len(curves)), figsize=(5.5 * max(1, len(curves)), 3.8), squeeze=False)
for ax, (dataset, lines) in zip(axes[0], curves.items()):
    for split, line in lines.items():
        ax.plot(line.ts.numpy(), line.loss.numpy(), marker="o", label=f"{split} loss")
    ax.axvline(0, color="grey", lw=0.6)
    ax.axvline(1, color="grey", lw=0.6)
    ax.set_xlabel("g (0: NaiveFedGloSS, 1: FedGloSS)")
    ax.set_ylabel("loss")
    ax.set_title(dataset if page.stand_in.is_paper else f"{dataset} setting on {data_name}")
    ax.legend()
figure.tight_layout()
worst = barriers["barrier"].max() if len(barriers) else float("nan")
page.figure(figure, f"Loss along w(g) = g w_FedGloSS + (1 - g) w_Naive, g in [-1, 2], on {data_name}; the largest "
                    f"barrier between the two models is {worst:.3f}.",
            alt=f"Line chart of the training and test loss against g from -1 to 2 between the NaiveFedGloSS (g = 0) "
                f"and FedGloSS (g = 1) models on {data_name}; largest barrier {worst:.3f}.")
page.table(barriers, f"Loss at the two ends and the barrier (largest rise above the chord) per split; the largest "
                     f"is {worst:.3f}.")

# %% [markdown]
# ## What we found

# %%
lines = [f"At the **{scale}** scale the largest loss barrier between the NaiveFedGloSS and FedGloSS models is "
         f"{worst:.3f} (the paper: none, the two models share a basin)."]
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
