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
# # Table 11: data-set statistics
#
# **What the paper lists.** For each data set: the number of training clients and the
# number of training and test samples (CIFAR-10 and CIFAR-100: 100 clients sharing the
# 50,000 training images, the 10,000 test images held out; Landmarks-User-160k: 1,262
# clients).
#
# **How it is made here.** Flcore's numbers are counted on the splits it generates: the
# partition a `paper`-scale run uses (`flcore.data.partition` with the run's clients,
# images per client, alpha and seed), at each of the paper's alphas (CIFAR-10: 0, 0.05,
# 100; CIFAR-100: 0, 0.5, 1000). The labels are CIFAR's own when the files are under
# `data_root`; otherwise labels with CIFAR's class counts, which give the same per-client
# counts (the partition reads labels only through their classes). The test set is the
# full CIFAR test split. Landmarks-User-160k is *not in flcore* (its images are not
# obtainable offline). The published table is a data file
# (`flcore/papers/fedgloss/published/fedgloss-table-11.csv`).
#
# **How to rerun.** `flcore reproduce fedgloss-table-11` (no training; seconds).
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
from flcore.report import compare_settings
from flcore.report.page import Page
from flcore.report.split_files import show_official_splits
from flcore.reproduction.published import published, source
from flcore.reproduction.splits import dataset_stats_ours, paper_splits, split_summary

page = Page.from_parameters("fedgloss-table-11", globals())
splits = paper_splits(data_root)

# %% [markdown]
# ## Published beside flcore

# %%
paper = published("fedgloss-table-11")
ours = dataset_stats_ours(list(paper["dataset"]), splits)
table = compare_settings(paper, ours, ["dataset"])
agree = (table["match"] == "yes").sum()
missing = ", ".join(table.loc[table["match"] == "not in flcore", "dataset"]) or "none"
page.table(table, f"The paper's data-set statistics beside those of the splits flcore generates: {agree} of "
                  f"{len(table)} rows agree; data sets flcore does not have: {missing}.",
           downloads={"published": paper, "flcore": ours})
page.note(f"Published values: {source('fedgloss-table-11')['source']}. Labels used: "
          f"{', '.join(sorted({s.labels_from for s in splits}))}.")

# %% [markdown]
# ## Every split
#
# The table above sums over clients; here is each split: clients, training images, images
# per client and classes per client (mean and range). Figure 20 shows the same splits
# client by client.

# %%
summary = split_summary(splits)
equal = (summary["images_per_client"] == summary["images_per_client"].iloc[0]).all()
page.table(summary, f"The six CIFAR splits flcore generates at the paper scale: "
                    f"{'every client holds ' + summary['images_per_client'].iloc[0] + ' images in every split' if equal else 'client sizes differ between splits'}, "
                    f"and the mean number of classes per client grows with alpha from "
                    f"{summary['mean_classes_per_client'].min():g} to {summary['mean_classes_per_client'].max():g}.")

# %% [markdown]
# ## The authors' split files
#
# The federations the FedGloSS authors trained on, when their split files are given (the parameter
# `split_files`, LEAF JSON as their repository publishes it): each file's clients, images and
# classes per client beside flcore's split of the same data set and alpha.

# %%
official = show_official_splits(page, split_files, splits)
