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
# # Figure 3: global loss surfaces of five methods
#
# **What the paper says.** Figure 3 draws the global loss surface on CIFAR-10 of the final
# models of FedAvg, FedSAM, FedGAMMA, FedSMOO and FedLESAM-D: "FedAvg, FedSAM and FedGAMMA can
# not achieve desirable flatness. FedSMOO achieves much flatter loss landscape while our
# FedLESAM-D further minimizes the global sharpness". The paper gives pictures, no numbers,
# and does not state the split or how the surfaces are drawn.
#
# **How it is made here.** The final global models of Table 2's runs at Dirichlet 0.1 (our
# choice: the setting of the paper's Fig. 2), 100 clients with 10% per round; surfaces by Li
# et al.'s filter-normalised random directions (the paper cites them) on the pooled training
# data (`flcore.experiments.fedlesam_surfaces`). A table reduces each surface to numbers so
# the methods can be ordered by flatness. Below the paper scale MNIST-1D stands in for
# CIFAR-10 and the grid is coarse.
#
# **How to rerun.** `flcore reproduce fedlesam-fig-3 --scale small`; `--scale paper` on a GPU.

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

from flcore.analysis.plots import plot_surface_2d
from flcore.experiments.artifacts import get_artifact
from flcore.experiments.fedlesam_surfaces import global_surface, surface_summary
from flcore.experiments.published import source
from flcore.experiments.runner import ensure_runs
from flcore.report import set_style
from flcore.report.page import Page

set_style()
artifact = get_artifact("fedlesam-fig-3")
page = Page(artifact.id)
#: grid points per axis and training samples of the surfaces (coarse below the paper scale)
grid = {"smoke": 5, "small": 11, "paper": 21}[scale]
samples = {"smoke": 500, "small": 2000, "paper": 10000}[scale]
data_name = "CIFAR-10" if scale == "paper" else f"MNIST-1D ({scale} scale, standing in for CIFAR-10)"

# %% [markdown]
# ## The runs
#
# Finished runs come from the store, missing ones are trained now.

# %%
specs = artifact.runs(scale, seeds)
runs = ensure_runs(specs, store=store, device=device, workers=workers, data_root=data_root, download=download)
status = runs.groupby("status").size().rename("runs").to_frame()
page.table(status.reset_index(), f"{len(runs.drop_duplicates('run_id'))} runs make this {artifact.kind} at the "
                                 f"{scale} scale, by status.")

# %% [markdown]
# ## The surfaces
#
# The loss of each final global model on the pooled training data, on a `grid x grid` grid
# of two filter-normalised random directions spanning [-1, 1] (one colour scale for all).

# %%
finished = runs[runs["status"] == "finished"].drop_duplicates("run_id")
surfaces = {row["algorithm"]: global_surface(row["run_dir"], num=grid, samples=samples, device="cpu")
            for row in finished.to_dict("records")}
summary = pd.DataFrame([{"algorithm": name, **surface_summary(s)} for name, s in surfaces.items()])
if len(surfaces):
    fig, axes = plt.subplots(1, len(surfaces), figsize=(3.6 * len(surfaces), 3.2), squeeze=False)
    for ax, (name, surface) in zip(axes[0], surfaces.items()):
        plot_surface_2d(surface, ax=ax, levels=20, colorbar=False, title=name)
    fig.tight_layout()
    ranked = list(summary.sort_values("edge_rise")["algorithm"])
    flattest = ranked[0]
    page.figure(fig, f"Global loss surfaces on {data_name}: the flattest (smallest loss rise at the grid's edge) is "
                     f"{flattest}.", alt=f"Contour plots of the training loss around each final global model ({', '.join(surfaces)}).")
    page.table(summary, f"The surfaces in numbers: loss at the centre, mean rise over the grid, rise at the edge; "
                        f"from flattest to sharpest: {' > '.join(ranked)}.",
               show=summary.round(4))
display(Markdown(f"Published values: {source(artifact.id)['value']}."))

# %% [markdown]
# ## The paper's claims: verdicts

# %%
verdicts = page.check_claims(scale, store=store, seeds=seeds, device=device, workers=workers)
page.show_claims()
