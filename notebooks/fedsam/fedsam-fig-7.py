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
# # Figure 7: the global model's output norm on each client's data
#
# **What the paper says.** Appendix Figure 7 of the FedSAM paper shows, as heat-maps over
# rounds, the L2 norm of the CIFAR-100 global model's outputs ("the classifier outputs")
# on each client's local data, with FedAvg: "(a) with alpha = 0, the model tends to focus
# on a different client's distribution, i.e. on a single class, at each round. (b) when
# alpha = 1000, the model gives the same attention to each distribution", "a higher norm
# value" corresponding to "greater attention paid to that class". The figure has no
# numbers.
#
# **How it is made here.** FedAvg with the CIFAR-100 protocol (5 clients per round) at
# alpha = 0 and 1k, trained as *recorded* runs: every `probe_every` rounds the probe
# `feature_norms` evaluates the global model on every client's training data and stores
# the mean over the client's samples of the L2 norm of the logits (the paper does not say
# how samples are aggregated). Rows are the clients, sorted by the class they hold most
# (at alpha = 0 their only class); columns the probed rounds. The number in the captions
# is how unevenly the model treats the clients: the coefficient of variation of the norms
# across clients, averaged over the probed rounds. Below the `paper` scale MNIST-1D stands
# in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedsam-fig-7 --scale small`; `--scale paper` on a
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
import numpy as np
import pandas as pd

from flcore.papers.fedsam import analysis as fedsam_analysis
from flcore.report.geometry_plots import client_heatmap
from flcore.report.page import Page
from flcore.reproduction.run_geometry import client_majority_class, client_spread, probe_history
from flcore.reproduction.runner import run_metrics

page = Page.from_parameters("fedsam-fig-7", globals())
data_name = page.stand_in.data_name("CIFAR-100")

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
every = fedsam_analysis.PROBE_EVERY[scale]
page.table(runs[["algorithm", "alpha", "record", "status", "run_id"]],
           f"The recorded FedAvg runs of the figure (probes every {every} rounds): "
           f"{int((runs['status'] == 'finished').sum())} of {len(runs)} finished.")

# %% [markdown]
# ## The heat-maps
#
# Rows: clients sorted by their (main) class; columns: probed rounds.

# %%
finished = runs[runs["status"] == "finished"]
histories, rows = {}, []
for row in finished.to_dict("records"):
    history = probe_history(run_metrics(pd.DataFrame([row]), store=store), "feature_norms")
    classes = client_majority_class(row["run_dir"], data_root=data_root)
    history["class"] = classes[history["client"].to_numpy()]
    histories[row["alpha"]] = (history, list(np.argsort(classes, kind="stable")))
    # the class whose clients get the largest mean norm in each probed round
    favourite = history.groupby(["round", "class"])["value"].mean().groupby(level=0).idxmax()
    changes = sum(a[1] != b[1] for a, b in zip(favourite.values[:-1], favourite.values[1:]))
    rows.append({"alpha": row["alpha"], "probed rounds": history["round"].nunique(),
                 "spread across clients (CV)": client_spread(history),
                 "rounds where the favoured class changes": f"{changes} of {max(0, len(favourite) - 1)}"})
summary = pd.DataFrame(rows)
if histories:
    figure, axes = plt.subplots(1, len(histories), figsize=(6 * len(histories), 4.5), squeeze=False)
    for ax, (alpha, (history, order)) in zip(axes[0], sorted(histories.items())):
        client_heatmap(ax, history, "client", title=f"FedAvg, alpha = {alpha:g}", row_order=order,
                       label="mean L2 norm of the logits")
        ax.set_yticks([])
        ax.set_ylabel("clients (sorted by class)")
    figure.tight_layout()
    page.figure(figure, f"Mean L2 norm of the global FedAvg model's logits on each client's data as rounds pass on "
                        f"{data_name}; how unevenly the clients are treated (coefficient of variation across clients): "
                        + ", ".join(f"{r['spread across clients (CV)']:.3f} at alpha = {r['alpha']:g}" for r in rows)
                        + ".",
                alt=f"{len(histories)} heat-maps on {data_name}, probed rounds on the x axis and the clients (sorted "
                    "by class) on the y axis, coloured by the mean L2 norm of the global model's logits on the "
                    "client's data; " + "; ".join(
                        f"alpha = {r['alpha']:g}: coefficient of variation across clients {r['spread across clients (CV)']:.3f}, "
                        f"the favoured class changes in {r['rounds where the favoured class changes']} rounds"
                        for r in rows) + ".")
    page.table(summary, "How unevenly the global model treats the clients: the coefficient of variation of the norms "
                        "across clients (mean over probed rounds), and how often the class with the largest norm "
                        "changes from one probed round to the next.")
else:
    page.note("No recorded run is finished: nothing to draw.")

# %% [markdown]
# ## What we found

# %%
lines = []
if len(summary) >= 2:
    het, hom = summary.iloc[0], summary.iloc[-1]
    uneven = "more" if het["spread across clients (CV)"] > hom["spread across clients (CV)"] else "less"
    lines.append(f"At alpha = {het['alpha']:g} the global model treats the clients {uneven} unevenly than at alpha = "
                 f"{hom['alpha']:g} (coefficient of variation {het['spread across clients (CV)']:.3f} against "
                 f"{hom['spread across clients (CV)']:.3f}; the paper: more), and the favoured class changes in "
                 f"{het['rounds where the favoured class changes']} probed rounds.")
if scale == "smoke":
    lines.append("The smoke scale trains for a handful of rounds: it proves the code path, not the science.")
page.note(" ".join(lines) or "No finished runs to draw.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
