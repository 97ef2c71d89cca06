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
# # Figure 20: class distribution across clients
#
# **What the paper shows.** How the CIFAR-10 (alpha 0, 0.05, 100) and CIFAR-100 (alpha 0,
# 0.5, 1000) training images are spread over the 100 clients, with the average number of
# classes a client sees on top of each chart: one class per client at alpha = 0, nearly
# all classes at the largest alpha. The text gives no numbers (the averages printed on the
# charts are lost in the text conversion), so there is nothing to compare cell by cell.
#
# **How it is made here.** The splits are the ones flcore trains on: the partition a
# `paper`-scale run uses (`flcore.data.partition`: Hsu et al.'s Dirichlet split with total
# concentration alpha, 100 clients x 500 images, the run's seed). The labels are CIFAR's
# own when the files are under `data_root`; otherwise labels with CIFAR's class counts,
# which give the same per-client counts (the partition reads labels only through their
# classes). Each panel is a heat-map: one column per client (ordered by its most frequent
# class), one row per class, the colour the share of the client's images in that class.
#
# **How to rerun.** `flcore reproduce fedgloss-fig-20` (no training; seconds).
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
data_root = "data"  # CIFAR folder; without the files the splits use CIFAR's class counts (same statistics)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds
split_files = None  # the authors' split files, {"cifar10": {0.05: PATH}, ...}; None: flcore's splits only

# %%
from flcore.report.page import Page
from flcore.report.split_files import show_official_splits
from flcore.reproduction.splits import paper_splits, plot_class_distribution, split_summary

page = Page.from_parameters("fedgloss-fig-20", globals())
splits = paper_splits(data_root, seed=seeds[0])

# %% [markdown]
# ## The class composition of every client

# %%
summary = split_summary(splits)
means = "; ".join(f"{r.dataset} alpha = {r.alpha:g}: {r.mean_classes_per_client:.2f}" for r in summary.itertuples())
homogeneous = [max((s for s in splits if s.dataset == d), key=lambda s: s.alpha) for d in ("cifar10", "cifar100")]
fewest = "; ".join(f"{s.dataset} alpha = {s.alpha:g}: {int(s.classes_per_client.min())} of {s.counts.shape[1]}"
                   for s in homogeneous)
fig = plot_class_distribution(splits)
page.figure(fig,
            caption=f"Per-client class composition of flcore's CIFAR splits. Mean classes per client: {means}. "
                    f"At alpha = 0 every client holds one class; as alpha grows clients see more classes, but even "
                    f"at the largest alpha some clients hold far fewer than all (fewest: {fewest}): clients draw "
                    "in turn, and the last ones take what the others left.",
            alt="Six heat-maps in two rows, CIFAR-10 on top (alpha 0, 0.05, 100) and CIFAR-100 below (alpha 0, "
                "0.5, 1000). The horizontal axis is the 100 clients, the vertical axis the classes, the colour the "
                "share of a client's images in each class. At alpha 0 each client is a single bright cell forming a "
                "staircase diagonal; at alpha 0.05 and 0.5 most clients have one dominant class with a few scattered "
                "minor ones; at alpha 100 and 1000 the panels are an even medium colour except a few dark columns, "
                "clients missing many classes.")

# %% [markdown]
# ## The numbers behind the figure

# %%
page.table(summary, f"Images and classes per client in each split; the mean number of classes per client "
                    f"ranges from {summary['mean_classes_per_client'].min():g} (alpha = 0) to "
                    f"{summary['mean_classes_per_client'].max():g}.")
page.note("Labels used: " + ", ".join(sorted({s.labels_from for s in splits})) + ".")

# %% [markdown]
# ## The authors' split files
#
# The federations the FedGloSS authors trained on, when their split files are given (the parameter
# `split_files`, LEAF JSON as their repository publishes it): each file's clients, images and
# classes per client beside flcore's split of the same data set and alpha.

# %%
official = show_official_splits(page, split_files, splits)
