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
# # Table 9: data-set statistics
#
# **What the paper lists.** For each data set of the FedSAM paper: the task
# (classification, domain generalization DG, semantic segmentation SS), the number of
# training clients, whether client sizes differ (size imbalance), and the numbers of
# training and test samples. CIFAR-10 and CIFAR-100: 100 clients of 500 images each, the
# 10,000 test images held out.
#
# **How it is made here.** Flcore's CIFAR rows are counted on the splits it generates: the
# partition a `paper`-scale run uses (`flcore.data.partition` with the run's clients,
# images per client, alpha and seed) at each of the paper's alphas (CIFAR-10: 0, 0.05,
# 100; CIFAR-100: 0, 0.5, 1000); size imbalance is "yes" when two clients of a split hold
# different numbers of images. The labels are CIFAR's own when the files are under
# `data_root`; otherwise labels with CIFAR's class counts, which give the same per-client
# counts. CIFAR-100-PAM, CIFAR-10-C/100-C, Landmarks-User-160k, Cityscapes and IDDA are
# *not in flcore* (not obtainable offline, or not image classification). The published
# table is a data file (`flcore/papers/fedsam/published/fedsam-table-9.csv`); the
# heterogeneous Cityscapes split's sample counts were garbled in the text conversion and
# are left empty.
#
# **How to rerun.** `flcore reproduce fedsam-table-9` (no training; seconds).
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

page = Page.from_parameters("fedsam-table-9", globals())
splits = paper_splits(data_root, seed=seeds[0])

# %% [markdown]
# ## Published beside flcore

# %%
paper = published("fedsam-table-9")
ours = dataset_stats_ours(list(paper["dataset"]), splits,
                          columns=("train_clients", "size_imbalance", "train_samples", "test_samples"), task=True)
table = compare_settings(paper, ours, ["dataset"])
agree = ", ".join(table.loc[table["match"] == "yes", "dataset"]) or "none"
missing = (table["match"] == "not in flcore").sum()
page.table(table, f"The paper's data-set statistics beside those of the splits flcore generates: the rows flcore "
                  f"has agree ({agree}); {missing} of the {len(table)} data sets are not in flcore.",
           downloads={"published": paper, "flcore": ours})
page.note(f"Published values: {source('fedsam-table-9')['source']}. Labels used: "
          f"{', '.join(sorted({s.labels_from for s in splits}))}.")

# %% [markdown]
# ## Every split
#
# Per split: clients, training images, images per client and classes per client.

# %%
summary = split_summary(splits)
sizes = sorted(set(summary["images_per_client"]))
balanced = len(sizes) == 1 and "\u2013" not in sizes[0]
page.table(summary, f"The six CIFAR splits flcore generates at the paper scale: images per client "
                    f"{', '.join(sizes)}, so {'no' if balanced else 'some'} size imbalance; "
                    f"mean classes per client from {summary['mean_classes_per_client'].min():g} to "
                    f"{summary['mean_classes_per_client'].max():g}.")

# %% [markdown]
# ## The authors' split files
#
# The federations the FedSAM authors trained on, when their split files are given (the parameter
# `split_files`, LEAF JSON as their repository publishes it): each file's clients, images and
# classes per client beside flcore's split of the same data set and alpha.

# %%
official = show_official_splits(page, split_files, splits)
