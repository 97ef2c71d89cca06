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
# # Figure 17: accuracy vs rounds with ResNet-18
#
# **What the paper says.** Test accuracy against rounds with ResNet-18 (GroupNorm) on
# CIFAR-100 at alpha = 0.5 (left) and CIFAR-10 at alpha = 0.05 (right), SAM-based (a, c) and
# SGD-based (b, d) methods: "FedGloSS consistently achieves the best performance, both in
# terms of final accuracy and convergence speed." The figure has no numbers; Table 3's
# ResNet-18 columns have the final values.
#
# **How it is made here.** The `gloss-resnet-main` runs (10 clients per round, 10k rounds,
# the paper's Table 12 ResNet settings), run at the `paper` scale only: below it every model
# is the MNIST-1D CNN, so a ResNet block would repeat the CNN runs of Figures 15-16, and
# this page says so instead of drawing them twice.
#
# **How to rerun.** `flcore reproduce fedgloss-fig-17 --scale paper` on a GPU (22 runs per
# seed).

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
from flcore.papers.fedgloss import results as gloss
from flcore.report.page import Page
from flcore.report.plots import accuracy_curves
from flcore.reproduction.runner import run_metrics

page = Page.from_parameters("fedgloss-fig-17", globals())

# %% [markdown]
# ## Test accuracy against rounds

# %%
specs = page.artifact.runs(scale, seeds)
if not specs:
    page.note(f"At the **{scale}** scale this figure has no runs of its own: the ResNet-18 runs exist at the "
              "`paper` scale only (below it the model is the MNIST-1D CNN, whose curves are Figures 15 and "
              "16). Rerun with `--scale paper` on a GPU.")
else:
    runs = page.runs(specs)
    runs["panel"] = [f"{d} alpha = {a:g}, {b} clients" for d, a, b in zip(runs["dataset"], runs["alpha"], runs["block"])]
    panels = [f"{d} alpha = {a:g}, {b} clients" for d, a in reversed(gloss.RESNET_SETTINGS) for b in ("SAM", "SGD")]
    metrics = run_metrics(runs, store=store)
    figure = accuracy_curves(metrics, hue="algorithm", col="panel", hue_order=[a.label for a in gloss.GLOSS_ALGORITHMS],
                             col_order=panels, height=3.2)
    final = runs.drop_duplicates(["panel", "algorithm"]).set_index(["panel", "algorithm"])["mean_last_100"]
    final = final.astype(float).mul(100).dropna()
    leaders = {p: final[p].idxmax() for p in panels if p in final.index.get_level_values(0)}
    page.figure(figure, "Test accuracy against rounds with ResNet-18. Highest at the end: "
                + "; ".join(f"{p}: {name}" for p, name in leaders.items()) + ".",
                alt="Line charts of test accuracy in percent against rounds with ResNet-18, one panel per data set and "
                    "client optimizer, one line per method: "
                    + "; ".join(f"{p}: " + ", ".join(f"{a} ending at {v:.1f}%" for a, v in final[p].items())
                                for p in leaders) + ".")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
