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
# # Figure 12: test error around three local models at alpha = 0.5
#
# **What the paper says.** Appendix Figure 12 of the FedSAM paper draws the CIFAR-100 test
# error on the plane through "three distinct local models trained with alpha = 0.5 for 20k
# rounds" (FedAvg, presumably): the intermediate heterogeneity level of Figure 2 (c, d),
# where at alpha = 0 the clients' models sit in high-error regions and at alpha = 1k in a
# connected low-error one. The figure has no numbers.
#
# **How it is made here.** FedAvg with the CIFAR-100 protocol (5 clients per round)
# trained as *recorded* runs, which save the last round's global model and the round's
# client models after local training; the plane goes through the first three of that
# round's five clients (the paper does not say which clients). Planes after Garipov et al.
# (the paper's App. C.3): 21 x 21 points at the `paper` scale (fewer below) over the
# models' extent plus a 20% margin. The test error is measured on the test set (a subset
# below `paper`). Below the `paper` scale MNIST-1D stands in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedsam-fig-12 --scale small`; `--scale paper` on a
# GPU, or in Colab with `scale = "paper"`.

# %% [markdown]
# The first cell installs flcore when it is missing (on Colab); the second holds the
# parameters that `flcore reproduce` sets.

# %%
import importlib.util
import subprocess
import sys

if importlib.util.find_spec("flcore") is None:
    subprocess.check_call([sys.executable, "-m", "pip", "install", "-q",
                           "flcore @ git+https://github.com/flcore/flcore"])

# %% tags=["parameters"]
scale = "smoke"  # smoke (seconds, CI) | small (minutes, CPU) | paper (the paper's protocol, GPU)
device = "auto"  # auto | cpu | cuda
seeds = [0]  # the paper reports one run per configuration
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
workers = None  # runs trained at once on a CPU; None: one per core
data_root = "data"  # CIFAR folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale)

# %%
import matplotlib.pyplot as plt
import pandas as pd
from IPython.display import Markdown, display

from flcore.analysis.io import resolve_device
from flcore.experiments.artifacts import get_artifact
from flcore.experiments.run_geometry import client_models_plane, geometry_settings, settings_rows
from flcore.experiments.runner import ensure_runs
from flcore.report import set_style
from flcore.report.geometry_plots import plane_panel
from flcore.report.page import Page

set_style()
artifact = get_artifact("fedsam-fig-12")
page = Page(artifact.id)
field = "error"  # what the panels show: "loss" (train loss) or "error" (test error)
analysis_device = str(resolve_device(device))
data_name = "CIFAR-100" if scale == "paper" else f"MNIST-1D ({scale} scale, standing in for CIFAR-100)"
what = "train loss" if field == "loss" else "test error"

# %% [markdown]
# ## The runs

# %%
specs = artifact.runs(scale, seeds)
runs = ensure_runs(specs, store=store, device=device, workers=workers, data_root=data_root, download=download)
settings = geometry_settings(scale)
page.table(runs[["algorithm", "alpha", "record", "status", "run_id"]],
           f"The recorded FedAvg run of the figure: {int((runs['status'] == 'finished').sum())} of {len(runs)} "
           "finished.")

# %% [markdown]
# ## The planes
#
# Triangles: the three clients' models after the last round's local training; white
# cross: their average.

# %%
planes, rows = {}, []
for row in runs[runs["status"] == "finished"].to_dict("records"):
    surface, ids = client_models_plane(row["run_dir"], settings=settings, device=analysis_device, data_root=data_root)
    planes[row["alpha"]] = (surface, ids)
    for name, loss, error in zip([f"client {i}" for i in ids] + ["their average"], surface.model_loss,
                                 surface.model_error):
        rows.append({"alpha": row["alpha"], "model": name, "train loss": loss, "test error (%)": 100 * error})
values = pd.DataFrame(rows)
column = "train loss" if field == "loss" else "test error (%)"
if planes:
    figure, axes = plt.subplots(1, len(planes), figsize=(6 * len(planes), 5), squeeze=False)
    for ax, (alpha, (surface, ids)) in zip(axes[0], sorted(planes.items())):
        plane_panel(ax, surface, field, [f"client {i}" for i in ids], title=f"{what}, alpha = {alpha:g}")
    figure.tight_layout()
    clients = values[values["model"] != "their average"].groupby("alpha")[column].mean()
    average = values[values["model"] == "their average"].set_index("alpha")[column]
    page.figure(figure, f"{what.capitalize()} on the plane through three clients' models after the last round on "
                        f"{data_name}: " + "; ".join(f"alpha = {a:g}: {clients[a]:.3g} at the clients on average, "
                                                     f"{average[a]:.3g} at their average" for a in clients.index) + ".",
                alt=f"{len(planes)} filled contour plots of the {what} on {data_name} on the plane through three "
                    "client models of the last round, one per alpha; " + "; ".join(
                        f"alpha = {r['alpha']:g}, {r['model']}: {what} {r[column]:.3g}" for r in rows) + ".")
else:
    display(Markdown("No recorded run is finished: nothing to draw."))
page.table(values, "Train loss and test error at the three clients' models and at their average (evaluated at the "
                   "models themselves).")
page.table(pd.DataFrame(settings_rows(settings)), f"Measurement settings at the {scale} scale (plane_grid points per "
                                                  "axis).")

# %% [markdown]
# ## What we found

# %%
lines = []
if len(values):
    for alpha, block in values.groupby("alpha"):
        spread = block[block["model"] != "their average"][column]
        lines.append(f"alpha = {alpha:g}: the three clients' {what} ranges from {spread.min():.3g} to "
                     f"{spread.max():.3g}; at their average it is "
                     f"{block[block['model'] == 'their average'][column].iloc[0]:.3g}.")
verdicts = page.check_claims(scale, store=store, seeds=seeds, device=device, workers=workers)
if scale == "smoke":
    lines.append("The smoke scale trains for a handful of rounds: it proves the code path, not the science.")
display(Markdown(" ".join(lines) or "No finished runs to draw."))

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
