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
# # Figure 1: loss landscapes of the global model
#
# **What the paper says.** Figure 1 of the FedSAM paper draws the cross-entropy loss of
# the CIFAR-100 global model around its final weights, in 3-D, for FedAvg and FedASAM at
# alpha = 0 (one class per client) and alpha = 1k (homogeneous): "When trained with
# FedAvg, the global model converges towards sharp minima. The sharpness-aware optimizer
# ASAM significantly smooths the surfaces." The figure has no numbers.
#
# **How it is made here.** The final global models of Table 2's runs (CIFAR-100
# protocol, 5 clients per round), read from the run store. The surface is the training
# loss at `w + a d1 + b d2` for two random directions `d1, d2` normalised filter by
# filter to the model's weights (Li et al. 2018, whose code the paper uses; biases left
# out), over `[-1, 1]^2`: the paper does not state its range or resolution, we use 21
# points per axis at the `paper` scale and fewer below (the settings table). The loss is
# measured on a fixed subset of the training set. Below the `paper` scale MNIST-1D stands
# in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedsam-fig-1 --scale small`; `--scale paper` on a
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
import matplotlib.pyplot as plt
import pandas as pd

from flcore.papers.fedsam import analysis as fedsam_analysis
from flcore.report.geometry_plots import surface_3d
from flcore.report.page import Page
from flcore.reproduction.run_geometry import geometry_settings, random_surface, settings_rows

page = Page.from_parameters("fedsam-fig-1", globals())
data_name = page.stand_in.data_name("CIFAR-100")

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
settings = geometry_settings(scale)
page.table(runs[["algorithm", "alpha", "status", "mean_last_100", "run_id"]],
           f"The four global models of the figure: {int((runs['status'] == 'finished').sum())} of {len(runs)} "
           "runs finished; mean_last_100 is their test accuracy (a fraction).")

# %% [markdown]
# ## The surfaces
#
# One panel per run, all on one vertical scale (clipped at its top).

# %%
surfaces = {}
for row in runs[runs["status"] == "finished"].to_dict("records"):
    surfaces[(row["algorithm"], row["alpha"])] = random_surface(row["run_dir"], settings, device=page.analysis_device,
                                                                data_root=data_root)


summary = pd.DataFrame([{"algorithm": a, "alpha": alpha, "loss at the model": fedsam_analysis.loss_rise(s)[1],
                         "mean rise over the grid": fedsam_analysis.loss_rise(s)[0]}
                        for (a, alpha), s in surfaces.items()])
zmax = max(float(s.loss.max()) for s in surfaces.values()) if surfaces else 1.0
figure = plt.figure(figsize=(13, 10))
for index, (key, surface) in enumerate(surfaces.items()):
    ax = figure.add_subplot(2, 2, index + 1, projection="3d")
    surface_3d(ax, surface, "loss", title=f"{key[0].replace(' E=1', '')}, alpha = {key[1]:g}", zmax=zmax)
figure.tight_layout()
flattest = summary.loc[summary["mean rise over the grid"].idxmin()] if len(summary) else None
page.figure(figure, f"Train loss around the final global model on {data_name} along two random filter-normalised "
                    "directions"
            + (f": the loss rises least around {flattest['algorithm']} at alpha = {flattest['alpha']:g} (by "
               f"{flattest['mean rise over the grid']:.2f} on average over the grid)." if flattest is not None else "."),
            alt=f"Four 3-D surface plots of the training loss on {data_name} over a {settings.surface_grid} by "
                f"{settings.surface_grid} grid of two random directions around the global model: "
                + "; ".join(f"{r['algorithm']} at alpha = {r['alpha']:g}: loss {r['loss at the model']:.2f} at the "
                            f"centre, rising by {r['mean rise over the grid']:.2f} on average"
                            for r in summary.to_dict("records")) + ".")
page.table(summary, "How much the train loss rises around each model (lower: flatter), the number the surfaces show.")
page.table(pd.DataFrame(settings_rows(settings)), f"Measurement settings at the {scale} scale (surface_grid points per "
                                                  f"axis over [-{settings.surface_span:g}, {settings.surface_span:g}]).")

# %% [markdown]
# ## What we found

# %%
lines = []
for alpha in sorted(summary["alpha"].unique()) if len(summary) else []:
    block = summary[summary["alpha"] == alpha].set_index("algorithm")["mean rise over the grid"]
    if {"FedAvg E=1", "FedASAM"} <= set(block.index):
        flatter = "FedASAM" if block["FedASAM"] < block["FedAvg E=1"] else "FedAvg"
        lines.append(f"alpha = {alpha:g}: the loss rises by {block['FedAvg E=1']:.2f} around FedAvg and by "
                     f"{block['FedASAM']:.2f} around FedASAM, so {flatter} sits in the flatter region"
                     + (" as the paper finds." if flatter == "FedASAM" else ", unlike the paper."))
if scale == "smoke":
    lines.append("The smoke scale trains for a handful of rounds: it proves the code path, not the science.")
page.note(" ".join(lines) or "No finished run to draw.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
