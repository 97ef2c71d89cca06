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
# # Figure 2: perturbation drift and global sharpness during training
#
# **What the paper says.** Figure 2 follows FedAvg, FedSAM, MoFedSAM, FedGAMMA, FedSMOO and
# FedLESAM on CIFAR-10 with Dirichlet 0.1 as training goes: the *perturbation drift* (PD)
# between the clients' perturbations and the true global one (left) and the global
# sharpness, with centralized training as a reference (right). FedSAM is no flatter globally
# than FedAvg; MoFedSAM, FedGAMMA and FedSMOO reach lower sharpness but stay far from
# FedLESAM and centralized training; FedLESAM's PD is much smaller, so its estimate is close
# to the true global perturbation. Curves only, no numbers; the PD formula is lost in our copy.
#
# **How it is made here.** Each run records the probe `perturbation` every 10 rounds
# (`flcore.papers.fedlesam.analysis`; every 2 at the smoke scale):
#
# - the perturbation each client of the next round applies at its first step from the new
#   global model, by the method's own perturbation part (FedSAM, MoFedSAM, FedGAMMA: the
#   client's normalised gradient; FedSMOO: its corrected one, with its dual and the server's
#   `s`; FedLESAM: the direction from its stored `w_i^old`, zero before its first visit), on
#   the client's whole training set; FedAvg has none;
# - the true global perturbation, the normalised gradient on the pooled training data;
# - PD per unit radius, `(1/M) sum_i |u_i - u|` between the unit directions (0: the same
#   direction, 1.41: orthogonal), because the methods use different radii;
# - the global sharpness `F(w + 0.05 g/|g|) - F(w)` on the pooled training data, one radius
#   for all methods; the centralized run's final model is the reference line.
#
# Below the paper scale MNIST-1D stands in for CIFAR-10 and the probed runs are 80 rounds
# long (labelled `rounds`).
#
# **How to rerun.** `flcore reproduce fedlesam-fig-2 --scale small`; `--scale paper` on a GPU.

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

from flcore.analysis.flatness import sharpness
from flcore.analysis.io import load_run
from flcore.papers.fedlesam.analysis import MAX_POOLED, SHARPNESS_RADIUS
from flcore.report.page import Page
from flcore.reproduction.published import source
from flcore.reproduction.runner import run_metrics

page = Page.from_parameters("fedlesam-fig-2", globals())
data_name = page.stand_in.data_name("CIFAR-10")

# %% [markdown]
# ## The runs
#
# Finished runs come from the store, missing ones are trained now.

# %%
runs = page.train()

# %% [markdown]
# ## Drift and sharpness as rounds pass

# %%
probed = runs[runs["algorithm"] != "Centralized"]
metrics = run_metrics(probed, store=store)
recorded = metrics.dropna(subset=["perturbation.sharpness"]) if "perturbation.sharpness" in metrics else metrics
central = runs[(runs["algorithm"] == "Centralized") & (runs["status"] == "finished")]
reference = None
if len(central):
    loaded = load_run(central.iloc[0]["run_dir"], device="cpu")
    x, y = loaded.data("train", samples=MAX_POOLED)
    reference = sharpness(loaded.flat, loaded.w, x, y, SHARPNESS_RADIUS).sharpness
fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
for name, block in recorded.groupby("algorithm", sort=False):
    if "perturbation.drift" in block and block["perturbation.drift"].notna().any():
        left.plot(block["round"], block["perturbation.drift"], marker=".", label=name)
    right.plot(block["round"], block["perturbation.sharpness"], marker=".", label=name)
if reference is not None:
    right.axhline(reference, color="k", linestyle="--", label="Centralized (final)")
left.set(xlabel="round", ylabel="PD per unit radius", title="perturbation drift")
right.set(xlabel="round", ylabel=f"sharpness (radius {SHARPNESS_RADIUS})", title="global sharpness")
left.legend(fontsize=8)
right.legend(fontsize=8)
fig.tight_layout()
last = recorded.sort_values("round").groupby("algorithm", sort=False).tail(1).set_index("algorithm")
drift = last["perturbation.drift"].dropna() if "perturbation.drift" in last else pd.Series(dtype=float)
finding = (f"at the last recorded round the smallest drift is {drift.idxmin()}'s ({drift.min():.2f}), the largest "
           f"{drift.idxmax()}'s ({drift.max():.2f}); the flattest global model is "
           f"{last['perturbation.sharpness'].idxmin()}'s") if len(drift) else "no drift recorded"
page.figure(fig, f"Perturbation drift and global sharpness on {data_name}: {finding}.",
            alt="Left: perturbation drift per round for each method with a perturbation. Right: global sharpness per "
                "round for each method, with the centralized model's as a dashed line.")
columns = [c for c in ("perturbation.drift", "perturbation.mean_cosine", "perturbation.unperturbed",
                       "perturbation.sharpness") if c in last]
page.table(last[columns].reset_index(), "The last recorded round of each method"
           + ("" if reference is None else f"; the centralized model's sharpness is {reference:.4f}") + ".",
           show=last[columns])
page.note(f"Published values: {source('fedlesam-fig-2')['value']}.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
