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
# # Figure 19: the server radius rho_s
#
# **What the paper says.** On CIFAR-100, (a) the accuracy of FedGloSS (SAM clients) as the
# server-side SAM radius rho_s varies, for the CNN at alpha = 0 and ResNet-18 at alpha = 0.5:
# "a smaller value of rho_s usually leads to the best results"; (b) for the CNN at alpha = 0,
# accuracy beside the top Hessian eigenvalue lambda_1 of the global model: "a larger
# server-side rho_s corresponds to a smaller lambda_1, i.e., a flatter region in the global
# loss landscape". The figure gives charts only.
#
# **How it is made here.** The `gloss-rho-sweep` runs: FedGloSS-SAM with only
# `gloss_rho_server` changed (grids inferred from the paper's Table 13: CNN {0.01, 0.05, 0.1,
# 0.2}, ResNet-18 {0.01, 0.05, 0.1, 0.5}). Below the `paper` scale MNIST-1D at alpha = 0
# stands in for the CNN setting, with the grid {0.01, 0.15, 0.3} around flcore's MNIST-1D
# default (0.15) and a quarter of the scale's rounds per run (labelled below); ResNet-18
# runs at the `paper` scale only. Panel (b)'s lambda_1 is read from the `fedgloss_lambda_max`
# metric of the analysis pages (Table 8) when it is registered; until then the panel shows
# the accuracy only.
#
# **How to rerun.** `flcore reproduce fedgloss-fig-19 --scale small`; `--scale paper` on a
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
seeds = [0]  # the paper reports the mean of 3 seeds; one seed below the paper scale
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
workers = None  # runs trained at once on a CPU; None: one per core
data_root = "data"  # CIFAR folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
import matplotlib.pyplot as plt
import pandas as pd

from flcore.papers.fedgloss import results as gloss
from flcore.report.page import Page
from flcore.reproduction.claims import METRICS

page = Page.from_parameters("fedgloss-fig-19", globals())

# %% [markdown]
# ## The runs

# %%
specs = page.artifact.runs(scale, seeds)
runs = page.runs(specs)
runs["accuracy"] = pd.to_numeric(runs["mean_last_100"], errors="coerce") * 100
rounds = {spec.labels["model"]: spec.resolve().rounds for spec in specs}
page.table(runs[["model", "alpha", "rho_server", "status", "rounds_done", "accuracy", "run_id"]],
           f"The {len(runs)} runs of the sweep at the {scale} scale (rounds per run: "
           + ", ".join(f"{m} {r}" for m, r in rounds.items()) + "); accuracy: mean of the last 100 rounds (%).")

# %% [markdown]
# ## (a) Accuracy against rho_s

# %%
sweep = runs.groupby(["model", "rho_server"], sort=True)["accuracy"].mean().reset_index()
fig, ax = plt.subplots(figsize=(5.5, 3.6))
for model, part in sweep.groupby("model", sort=False):
    label = (f"{model} (alpha = {0 if model == 'CNN' else 0.5})" if page.stand_in.is_paper
             else f"{page.stand_in.name} CNN ({scale} scale)")
    ax.plot(part["rho_server"], part["accuracy"], marker="o", label=label)
ax.set_xscale("log")
ax.set_xlabel("server radius rho_s")
ax.set_ylabel("test accuracy (%)")
ax.legend(fontsize=8)
best = sweep.loc[sweep.groupby("model")["accuracy"].idxmax()] if sweep["accuracy"].notna().any() else sweep.iloc[:0]
best_text = "; ".join(f"{m}: best at rho_s = {r:g} ({a:.1f}%)" for m, r, a in
                      zip(best["model"], best["rho_server"], best["accuracy"]))
page.figure(fig, f"FedGloSS accuracy against the server radius rho_s (CIFAR-100 setting): {best_text or 'no run finished'}.",
            alt="Line chart of test accuracy in percent against the server-side SAM radius rho_s on a log axis: "
                + "; ".join(f"{m}: " + ", ".join(f"rho_s {r:g} -> {a:.1f}%" for r, a in zip(p["rho_server"], p["accuracy"]))
                            for m, p in sweep.groupby("model", sort=False)) + ".")

# %% [markdown]
# ## (b) Accuracy and lambda_1 against rho_s, CNN

# %%
cnn = runs[(runs["model"] == "CNN") & (runs["status"] == "finished")].copy()
lam = METRICS.get("fedgloss_lambda_max")
cnn["lambda_1"] = [lam(row) if lam is not None else float("nan") for row in cnn.to_dict("records")]
by_rho = cnn.groupby("rho_server")[["accuracy", "lambda_1"]].mean()
fig, ax = plt.subplots(figsize=(5.5, 3.6))
ax.plot(by_rho.index, by_rho["accuracy"], marker="o", color="tab:blue")
ax.set_xscale("log")
ax.set_xlabel("server radius rho_s")
ax.set_ylabel("test accuracy (%)", color="tab:blue")
if by_rho["lambda_1"].notna().any():
    twin = ax.twinx()
    twin.plot(by_rho.index, by_rho["lambda_1"], marker="s", color="tab:red")
    twin.set_ylabel("lambda_1 of the global model", color="tab:red")
    lam_text = ", ".join(f"rho_s {r:g}: lambda_1 {v:.2f}" for r, v in by_rho["lambda_1"].items())
else:
    lam_text = "lambda_1 is not computed yet (the analysis pages' fedgloss_lambda_max metric is not registered)"
page.figure(fig, f"CNN setting: accuracy (blue) and the global model's top Hessian eigenvalue (red) against rho_s; "
                 f"{lam_text}.",
            alt="Line chart of accuracy against rho_s on a log axis, with lambda_1 on a second axis where computed: "
                + ", ".join(f"rho_s {r:g} -> {a:.1f}%" for r, a in by_rho["accuracy"].items()) + ". " + lam_text + ".")

# %% [markdown]
# ## What we found

# %%
lines = [f"At the **{scale}** scale: {best_text or 'no finished run'}."]
if gloss.SWEEP_ROUND_FRACTION[scale] < 1:
    lines.append(f"Each run trains {rounds.get('CNN')} rounds ({gloss.SWEEP_ROUND_FRACTION[scale]:.0%} of the "
                 "scale's), so the sweep compares radii with one another, not with the final accuracies of Table 3.")
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
