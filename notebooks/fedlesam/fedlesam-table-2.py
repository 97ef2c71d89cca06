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
# # Table 2: 12 methods on CIFAR-10 and CIFAR-100, Dirichlet and pathological splits
#
# **What the paper says.** Table 2 of the FedLESAM paper reports the test accuracy of FedAvg,
# FedAdam, SCAFFOLD, FedCM, FedDyn, FedSAM, MoFedSAM, FedGAMMA, FedSMOO, FedLESAM, FedLESAM-D
# and FedLESAM-S on CIFAR-10 and CIFAR-100 (ResNet-18 with GroupNorm), split among 100
# clients with 10% taking part in each round (upper half) or 200 with 5% (lower half), by
# Dirichlet and pathological label skew with two coefficients each. Its text: "our method
# performs the best or second best in the most cases"; on CIFAR-100 (upper half)
# FedLESAM-S improves on FedAvg by 6% and on the best baseline by 1% on average.
#
# **Every number of this table is missing from our copy of the paper's text** (the cells were
# lost when the PDF was converted), so this page shows our accuracies and our ranking only;
# nothing is compared with published numbers and no claim names this table.
#
# **How it is made here.** One run per cell, with the paper's protocol at the `paper` scale
# (its App. E: SGD lr 0.1, weight decay 1e-3, client lr x0.998 per round -- x0.9995 for
# FedDyn, FedSMOO and FedLESAM-D --, gradients clipped at 10 as its code does, 800 rounds;
# CIFAR-10 batch 50 and 5 local epochs, CIFAR-100 batch 20 and 2). Its Dirichlet coefficient
# is per class (flcore's `alpha` is the total: `alpha = a x classes`); "pathological with c
# classes" is `partition = "shards"` with `classes_per_client = c` (the two differ in how
# classes are dealt: *Known differences*). The coefficients are lost too: Dirichlet 0.6 and
# 0.1 (its Fig. 5) and pathological 3 (its Fig. 6) and 5 (its code's other value) are our
# reading. The reported number is the test accuracy averaged over the last 100 rounds.
# Below the paper scale MNIST-1D stands in for both data sets (one column, Dirichlet 0.1,
# 100 clients with 5 per round, 300 rounds, one seed).
# FedGMT (ICML 2025, published since) is trained at CIFAR-10, Dirichlet 0.1, 100 clients
# with 10% per round, for a later claim about it (at the end of the page); it is not ranked
# with the paper's methods.
#
# **How to rerun.** `flcore reproduce fedlesam-table-2 --scale small`; `--scale paper` on a
# GPU (192 runs of 800 rounds).

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
from flcore.papers.fedlesam import runs as fedlesam
from flcore.report import ours_accuracy
from flcore.report.page import Page
from flcore.reproduction.published import source

page = Page.from_parameters("fedlesam-table-2", globals())

# %% [markdown]
# ## The runs
#
# Finished runs come from the store, missing ones are trained now.

# %%
runs = page.train()  # the artifact's runs and the seeds the verdicts read

# %%
settings = page.settings("the methods'", by=("dataset", "algorithm"),
                         grid=("alpha", "classes_per_client", "partition", "seed"))

# %% [markdown]
# ## Ours
#
# Accuracy (%, mean of the last 100 rounds) by method, split and population; the paper's
# numbers are not available (above).

# %%
keys = ["dataset", "population", "split", "algorithm"]
datasets = {label: fedlesam.dataset_for(label, scale) for label in fedlesam.DATASETS}
cells = ours_accuracy(runs, keys, datasets)
order = [a.label for a in fedlesam.ALGORITHMS]
for label in fedlesam.datasets_for(scale):
    block = cells[cells["dataset"] == label]
    wide = block.pivot_table(index="algorithm", columns=["population", "split"], values="ours", sort=False)
    wide = wide.reindex([a for a in order if a in wide.index])
    best = wide.mean(axis=1).sort_values(ascending=False)
    stand_in = page.stand_in.ours()
    lesam_rank = list(best.index).index("FedLESAM-S") + 1 if "FedLESAM-S" in best.index else None
    page.table(block, f"{label}{stand_in}: accuracy (%) by method and setting. Best on average: {best.index[0]}; "
                      f"FedLESAM-S ranks {lesam_rank} of {len(best)} (the paper: best or second best in most cases).",
               show=wide)
page.note(f"Published values: {source('fedlesam-table-2')['value']}.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
verdicts = page.check_claims()
page.show_claims()
