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
# # Figure 6: loss surfaces of FedGF, local and global
#
# **What the paper says.** Figure 6 draws for FedGF what Figure 2 draws for FedSAM on
# CIFAR-100 at alpha = 0: the loss surface around a local model on its own loss F_i and
# around the global model on the global loss F. FedGF's local model is moderately flat, and
# its global model is flatter than FedSAM's -- the discrepancy is relieved. The paper gives
# the surfaces only.
#
# **How it is made here.** The run is Table 1's FedGF run at alpha = 0 (5 clients per
# round). `flcore.experiments.fedgf_analysis.loss_surfaces` continues it by one round from its
# stored final state to obtain the round's local models, and evaluates 2-D surfaces along two
# filter-normalised random directions (Li et al. 2018): around the first client's local model
# on its own data (F_i) and on the pooled training data (F), and around the final global model
# on F. F is evaluated on a seeded subset of the pooled client data; the grid is coarse below
# the paper scale.
#
# **How to rerun.** `flcore reproduce fedgf-fig-6 --scale small`; `--scale paper` on a GPU.

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
from flcore.experiments.fedgf_analysis import loss_surfaces
from flcore.experiments.runner import ensure_runs
from flcore.report import set_style
from flcore.report.page import Page

set_style()
artifact = get_artifact("fedgf-fig-6")
page = Page(artifact.id)
METHOD = "FedGF"

# %% [markdown]
# ## The run and its surfaces

# %%
specs = artifact.runs(scale, seeds)
runs = ensure_runs(specs, store=store, device=device, workers=workers, data_root=data_root, download=download)
row = runs.iloc[0]
surfaces = loss_surfaces(row["run_dir"], client=0, scale=scale) if row["status"] == "finished" else {}
panels = {"local_on_local": "local model on its own data (F_i)", "local_on_global": "local model on the global data (F)",
          "global_on_global": "global model on the global data (F)"}
summary = pd.DataFrame([{"surface": text, "loss at the centre": float(s.loss[len(s.xs) // 2, len(s.ys) // 2]),
                         "largest rise on the grid": float(s.loss.max() - s.loss[len(s.xs) // 2, len(s.ys) // 2])}
                        for key, text in panels.items() if (s := surfaces.get(key)) is not None])
page.table(summary, f"{METHOD} at alpha = 0, {scale} scale: the loss at each surface's centre and how much it rises "
                    f"over the grid (client {surfaces.get('client_id', '-')} of one further round).")

# %% [markdown]
# ## The figure

# %%
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
for ax, (key, text) in zip(axes, panels.items()):
    if key in surfaces:
        plot_surface_2d(surfaces[key], ax=ax, title=text)
rises = dict(zip(summary["surface"], summary["largest rise on the grid"])) if len(summary) else {}
flatter = (rises.get(panels["local_on_local"], float("nan")) < rises.get(panels["global_on_global"], float("nan")))
page.figure(fig, f"{METHOD}'s loss surfaces at alpha = 0 ({'CIFAR-100' if scale == 'paper' else 'MNIST-1D, ' + scale + ' scale'}): "
                 f"the local model's surface on its own data rises {'less' if flatter else 'no less'} than the global "
                 f"model's on the global data over the same grid.",
            alt="Three contour plots of training loss over two random filter-normalised directions: "
                + "; ".join(f"{k} rises by {v:.3f}" for k, v in rises.items()) + ".")

# %% [markdown]
# ## What we found

# %%
verdicts = page.check_claims(scale, store=store, seeds=seeds, device=device, workers=workers)
global_rise = rises.get(panels["global_on_global"], float("nan"))
lines = [f"At the **{scale}** scale FedGF's global model rises by {global_rise:.3f} over the grid on the global data "
         "(the paper: flatter than FedSAM's global model; Figure 2's page gives FedSAM's rise over the same grid), "
         f"and its local model's surface on its own data is {'flatter' if flatter else 'not flatter'} than that. "
         "The paper gives surfaces only."]
if scale == "smoke":
    lines.append("The smoke scale trains for a handful of rounds: it proves the code path, not the science.")
display(Markdown(" ".join(lines)))

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
