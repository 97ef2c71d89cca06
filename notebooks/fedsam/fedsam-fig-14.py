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
# # Figure 14: FedAvg, FedSAM and FedASAM in one plane
#
# **What the paper says.** Appendix Figure 14 of the FedSAM paper draws the plane through
# the final global models of FedAvg, FedSAM and FedASAM (CIFAR-100, 20k rounds), coloured
# by the train loss (a, c) and the test error (b, d), at alpha = 0 (a, b) and alpha = 0.5
# (c, d): "The minima reached by SAM and ASAM are found within low-loss neighborhoods",
# and ASAM "reaches the best local minimum". The figure has no numbers.
#
# **How it is made here.** The final global models of Table 2's runs (CIFAR-100 protocol,
# 5 clients per round; the three start from the same initial model, so they can share a
# plane), read from the run store. The plane is Garipov et al.'s (the paper's App. C.3):
# FedAvg at the origin, FedSAM on the x axis, FedASAM above; a grid of 21 x 21 points at
# the `paper` scale (fewer below) over the three models' extent plus a 20% margin (the
# paper does not state its margin). The train loss is measured on a fixed subset of the
# training set, the test error on the test set (a subset below `paper`). Below the `paper`
# scale MNIST-1D stands in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedsam-fig-14 --scale small`; `--scale paper` on a
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
from flcore.report.geometry_plots import plane_panel
from flcore.report.page import Page
from flcore.reproduction.run_geometry import geometry_settings, global_models_plane, settings_rows

page = Page.from_parameters("fedsam-fig-14", globals())
data_name = page.stand_in.data_name("CIFAR-100")
names = [label.replace(" E=1", "") for label in fedsam_analysis.PLANE_ALGORITHMS]

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
settings = geometry_settings(scale)
page.table(runs[["algorithm", "alpha", "status", "mean_last_100", "run_id"]],
           f"The six global models of the figure: {int((runs['status'] == 'finished').sum())} of {len(runs)} runs "
           "finished; mean_last_100 is their test accuracy (a fraction).")

# %% [markdown]
# ## The planes
#
# Rows: alpha = 0 and 0.5. Left: train loss; right: test error. Black triangles: the
# three models (FedAvg at the origin); white cross: their average.

# %%
planes, rows = {}, []
for alpha in (0.0, 0.5):
    block = runs[(runs["alpha"] == alpha) & (runs["status"] == "finished")].set_index("algorithm")
    if set(fedsam_analysis.PLANE_ALGORITHMS) <= set(block.index):
        dirs = [block.loc[label, "run_dir"] for label in fedsam_analysis.PLANE_ALGORITHMS]
        planes[alpha] = surface = global_models_plane(dirs, settings, device=page.analysis_device, data_root=data_root)
        for name, loss, error in zip(names, surface.model_loss, surface.model_error):
            rows.append({"alpha": alpha, "model": name, "train loss": loss, "test error (%)": 100 * error})
values = pd.DataFrame(rows)
figure, axes = plt.subplots(len(planes) or 1, 2, figsize=(12, 5 * max(1, len(planes))), squeeze=False)
for (alpha, surface), ax_row in zip(planes.items(), axes):
    plane_panel(ax_row[0], surface, "loss", names, title=f"train loss, alpha = {alpha:g}")
    plane_panel(ax_row[1], surface, "error", names, title=f"test error, alpha = {alpha:g}")
figure.tight_layout()


page.figure(figure, f"Planes through the final global models of FedAvg, FedSAM and FedASAM on {data_name}: the lowest "
                    "train loss is "
                    + ", ".join(f"{fedsam_analysis.lowest_model(values, a, 'train loss')}'s at alpha = {a:g}"
                                for a in planes) + "; the lowest test error "
                    + ", ".join(f"{fedsam_analysis.lowest_model(values, a, 'test error (%)')}'s at alpha = {a:g}"
                                for a in planes) + ".",
            alt=f"{2 * len(planes)} filled contour plots on {data_name} of the train loss (left) and the test error "
                "(right) on the plane through the FedAvg, FedSAM and FedASAM global models, one row per alpha; "
                + "; ".join(f"alpha = {r['alpha']:g}, {r['model']}: train loss {r['train loss']:.3f}, test error "
                            f"{r['test error (%)']:.1f}%" for r in values.to_dict("records")) + ".")
page.table(values, "Train loss and test error at the three models (evaluated at the models themselves, not read off "
                   "the grid).")
page.table(pd.DataFrame(settings_rows(settings)), f"Measurement settings at the {scale} scale (plane_grid points per "
                                                  "axis).")

# %% [markdown]
# ## What we found

# %%
lines = []
for alpha in planes:
    lines.append(f"alpha = {alpha:g}: the lowest test error of the three is "
                 f"{fedsam_analysis.lowest_model(values, alpha, 'test error (%)')}'s (the paper: ASAM's), the lowest "
                 f"train loss {fedsam_analysis.lowest_model(values, alpha, 'train loss')}'s.")
if scale == "smoke":
    lines.append("The smoke scale trains for a handful of rounds: it proves the code path, not the science.")
page.note(" ".join(lines) or "No finished runs to draw.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
