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
# # Figure 2: where the global and the local models converge
#
# **What the paper says.** Figure 2 of the FedSAM paper places CIFAR-100 models on loss
# surfaces. (a, b): the plane through the final FedAvg global models trained with
# alpha = 0, 0.5 and 1k, coloured by the train loss and the test error: "when alpha = 1k
# a low-loss region is reached at the end of training, while the same does not happen
# with lower values of alpha", and the shift between the train and test surfaces shows the
# alpha = 0 model "is unable to generalize well to unseen data". (c, d): the test-error
# plane through three clients' models after local training, at alpha = 0 and 1k: at
# alpha = 0 "the clients' updates are positioned in very high-error regions", while
# models trained on homogeneous data "are connected through a path of low error". The
# figure has no numbers.
#
# **How it is made here.** (a, b): the final global models of Table 2's FedAvg runs
# (CIFAR-100 protocol, 5 clients per round). (c, d): the same FedAvg configurations
# trained again with a snapshot of their last round (a *recorded* run: the global model
# and the round's client models after local training are saved), and the first three
# of that round's five clients (the paper does not say which clients or round). Planes
# after Garipov et al. (the paper's App. C.3): the first model at the origin, the second
# on the x axis; 21 x 21 points at the `paper` scale (fewer below) over the models'
# extent plus a 20% margin (the paper does not state its margin). Train loss on a fixed
# subset of the training set, test error on the test set (a subset below `paper`). Below
# the `paper` scale MNIST-1D stands in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedsam-fig-2 --scale small`; `--scale paper` on a
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

page = Page.from_parameters("fedsam-fig-2", globals())
data_name = page.stand_in.data_name("CIFAR-100")

# %% [markdown]
# ## The runs
#
# The FedAvg runs of Table 2 (final global models) and the recorded FedAvg runs (their
# last round's client models).

# %%
runs = page.runs()
runs["record"] = runs["record"].fillna("final model only") if "record" in runs else "final model only"
settings = geometry_settings(scale)
page.table(runs[["algorithm", "alpha", "record", "status", "mean_last_100", "run_id"]],
           f"The runs of the figure: {int((runs['status'] == 'finished').sum())} of {len(runs)} finished.")

# %% [markdown]
# ## (a, b) The final global models at alpha = 0, 0.5 and 1k

# %%
finals = runs[(runs["record"] == "final model only") & (runs["status"] == "finished")].set_index("alpha")
alpha_names = [f"alpha {a:g}" for a in fedsam_analysis.ALPHAS]
rows = []
if set(fedsam_analysis.ALPHAS) <= set(finals.index):
    globals_plane = global_models_plane([finals.loc[a, "run_dir"] for a in fedsam_analysis.ALPHAS], settings,
                                        device=page.analysis_device, data_root=data_root)
    for name, loss, error in zip(alpha_names, globals_plane.model_loss, globals_plane.model_error):
        rows.append({"panel": "a, b", "model": f"global, {name}", "train loss": loss, "test error (%)": 100 * error})
    figure, axes = plt.subplots(1, 2, figsize=(12, 5))
    plane_panel(axes[0], globals_plane, "loss", alpha_names, title="(a) train loss")
    plane_panel(axes[1], globals_plane, "error", alpha_names, title="(b) test error")
    figure.tight_layout()
    values = pd.DataFrame(rows)
    page.figure(figure, f"The plane through FedAvg's final global models trained with alpha = 0, 0.5 and 1k on "
                        f"{data_name}: train loss {', '.join(f'{v:.3f}' for v in values['train loss'])} and test "
                        f"error {', '.join(f'{v:.1f}%' for v in values['test error (%)'])} at the three models, in "
                        "that order.",
                alt=f"Two filled contour plots on {data_name} of the plane through three global models (alpha 0 at "
                    "the origin, alpha 0.5 on the x axis, alpha 1000 above): left the train loss, right the test "
                    "error; " + "; ".join(f"{r['model']}: train loss {r['train loss']:.3f}, test error "
                                          f"{r['test error (%)']:.1f}%" for r in rows) + ".")
else:
    page.note("The three final global models are not all finished: panels (a, b) are not drawn.")

# %% [markdown]
# ## (c, d) Three local models of the last round at alpha = 0 and 1k
#
# Triangles: the first three clients of the round; white cross: their average (what
# FedAvg would return for these three).

# %%
recorded = runs[runs["record"] != "final model only"]
local = fedsam_analysis.client_planes(recorded, settings, device=page.analysis_device, data_root=data_root)
rows += [{"panel": f"alpha {alpha:g}", **r} for alpha, (surface, ids) in local.items()
         for r in fedsam_analysis.client_plane_rows(surface, ids)]
values = pd.DataFrame(rows)
if local:
    figure = fedsam_analysis.draw_client_planes(local, "error",
                                                lambda index, alpha: f"({'cdef'[index]}) test error, alpha = {alpha:g}")
    averages = values[values["model"] == "their average"].set_index("panel")["test error (%)"]
    clients = values[values["model"].str.startswith("client")].groupby("panel")["test error (%)"].mean()
    page.figure(figure, f"Test error on the plane through three clients' models after the last round's local training "
                        f"on {data_name}: " + "; ".join(f"{panel}: {clients[panel]:.1f}% at the clients on average, "
                                                        f"{averages[panel]:.1f}% at their average"
                                                        for panel in averages.index) + ".",
                alt=f"{len(local)} filled contour plots of the test error on {data_name} on the plane through three "
                    "client models of the last round, one per alpha; " + "; ".join(
                        f"{r['panel']}, {r['model']}: test error {r['test error (%)']:.1f}%"
                        for r in rows if r["panel"] != "a, b") + ".")
else:
    page.note("No recorded run is finished: panels (c, d) are not drawn.")
page.table(values, "Train loss and test error at the models of the planes (evaluated at the models themselves).")
page.table(pd.DataFrame(settings_rows(settings)), f"Measurement settings at the {scale} scale (plane_grid points per "
                                                  "axis).")

# %% [markdown]
# ## What we found

# %%
lines = []
if len(values) and "a, b" in set(values["panel"]):
    block = values[values["panel"] == "a, b"].set_index("model")
    lines.append(f"The global model trained with alpha = 1k has a train loss of {block.iloc[2]['train loss']:.3f} "
                 f"against {block.iloc[0]['train loss']:.3f} with alpha = 0 (the paper: only alpha = 1k reaches a "
                 "low-loss region).")
for panel in [p for p in dict.fromkeys(values["panel"]) if p != "a, b"] if len(values) else []:
    block = values[values["panel"] == panel]
    lines.append(f"{panel}: the three local models have {block[block['model'] != 'their average']['test error (%)'].mean():.1f}% "
                 f"test error on average, their average {block[block['model'] == 'their average']['test error (%)'].iloc[0]:.1f}%.")
if scale == "smoke":
    lines.append("The smoke scale trains for a handful of rounds: it proves the code path, not the science.")
page.note(" ".join(lines) or "No finished runs to draw.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
