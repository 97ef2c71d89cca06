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
# # Figure 5: loss against perturbation magnitude on CIFAR-100
#
# **What the paper says.** Figure 5 plots the loss of the final global model of FedAvg,
# FedSAM, FedASAM, MoFedSAM, FedSMOO and FedGF as its weights are perturbed by growing
# amounts, on CIFAR-100 with 5 clients per round, non-IID and IID. Non-IID, FedGF's curve is
# a bit flatter than FedAvg's, FedSAM's and FedASAM's and lies more than 1.0 lower over a wide
# range (MoFedSAM's and FedSMOO's look flatter but sit higher); IID, the methods look alike
# except FedAvg and MoFedSAM, which are sharper. The paper does not say how it perturbs and
# gives curves only.
#
# **How it is made here.** The runs are Table 2's. For each final global model
# `flcore.analysis.lpf.perturbation_curve` evaluates the training loss (on a seeded subset of
# the pooled client data) at `w + r * eps` with `eps ~ N(0, I)`, a few draws per magnitude `r`
# (so the curve is LPF as a function of its sigma). Called through
# `flcore.papers.fedgf.analysis.perturbation_losses`.
#
# **How to rerun.** `flcore reproduce fedgf-fig-5 --scale small`; `--scale paper` on a GPU.

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

from flcore.papers.fedgf import runs as fedgf
from flcore.papers.fedgf.analysis import perturbation_losses, settings_for
from flcore.report import algorithm_color
from flcore.report.page import Page

page = Page.from_parameters("fedgf-fig-5", globals())
magnitudes = [0.0, 0.005, 0.01, 0.02, 0.03, 0.05] if scale != "smoke" else [0.0, 0.01, 0.05]

# %% [markdown]
# ## The runs and their curves

# %%
runs = page.runs()
parts = []
for row in runs[runs["status"] == "finished"].to_dict("records"):
    curve = perturbation_losses(row["run_dir"], magnitudes, scale)
    curve["algorithm"], curve["alpha"], curve["seed"] = row["algorithm"], row["alpha"], row["seed"]
    parts.append(curve)
curves = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
    columns=["magnitude", "loss", "loss_std", "algorithm", "alpha", "seed"])
wide = curves.pivot_table(index=["alpha", "algorithm"], columns="magnitude", values="loss")
page.table(curves, show=wide, caption=f"Training loss of each final global model at perturbation magnitude r "
                                      f"(Gaussian, {settings_for(scale)['curve_samples']} draws each), at the "
                                      f"{scale} scale.")

# %% [markdown]
# ## The figure

# %%
alphas = sorted(curves["alpha"].unique())
fig, axes = plt.subplots(1, max(1, len(alphas)), figsize=(5 * max(1, len(alphas)), 3.6), squeeze=False)
for ax, alpha in zip(axes[0], alphas):
    for algorithm in fedgf.FLATNESS_ALGORITHMS:
        line = curves[(curves["alpha"] == alpha) & (curves["algorithm"] == algorithm)].groupby("magnitude")["loss"].mean()
        if len(line):
            ax.plot(line.index, line.values, marker="o", label=algorithm, color=algorithm_color(algorithm))
    ax.set_title(("non-IID" if alpha == 0 else "IID") + f" (alpha = {alpha:g})")
    ax.set_xlabel("perturbation magnitude r")
    ax.set_ylabel("training loss")
axes[0][0].legend()
rises = curves.groupby(["alpha", "algorithm"]).apply(
    lambda g: g.loc[g["magnitude"].idxmax(), "loss"] - g.loc[g["magnitude"].idxmin(), "loss"],
    include_groups=False) if len(curves) else pd.Series(dtype=float)
non_iid = rises.loc[0.0].sort_values() if 0.0 in rises.index.get_level_values(0) else pd.Series(dtype=float)
lowest = curves[(curves["alpha"] == 0.0) & (curves["magnitude"] == max(magnitudes))].groupby("algorithm")["loss"].mean()
data_name = page.stand_in.short_name("CIFAR-100")
page.figure(fig, f"Loss against perturbation magnitude on {data_name}. Non-IID, the flattest curve (smallest rise) is "
                 f"{non_iid.index[0] if len(non_iid) else 'none'}'s and the lowest loss at r = {max(magnitudes)} is "
                 f"{lowest.idxmin() if len(lowest) else 'none'}'s (the paper: FedGF lowest by more than 1.0).",
            alt="Line charts of training loss against perturbation magnitude, one line per method, panels for "
                "non-IID and IID: " + "; ".join(f"alpha {a:g} {alg} rises by {v:.3f}" for (a, alg), v in rises.items()))

# %% [markdown]
# ## What we found

# %%
lines = [f"At the **{scale}** scale, in the non-IID case, the loss rises least over the magnitudes drawn for "
         + ", then ".join(non_iid.index) + "." if len(non_iid) else "No finished run to draw."]
lines.append("The paper gives curves only, so the page compares which curves are flatter and lower.")
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
