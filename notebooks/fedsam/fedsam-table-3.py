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
# # Table 3: CIFAR-100-PAM with ResNet-18
#
# **What the paper says.** Table 3 trains a ResNet-18 with GroupNorm on CIFAR-100-PAM, the
# federated CIFAR-100 of Reddi et al. (500 clients whose labels follow the coarse / fine
# hierarchy), with FedAvg, FedSAM and FedASAM, without augmentation and with Mixup or Cutout,
# one or two local epochs and 10 or 20 clients per round, at 5k and 10k rounds and with SWA.
# "Table 3 shows the results on CIFAR100-PAM with ResNet18: here SAM and SAM + SWA help more
# than ASAM."
#
# **Why it is not regenerated.** The CIFAR-100-PAM split is distributed through TensorFlow
# Federated and cannot be had offline or through torchvision; the methods themselves are
# flcore's FedAvg, FedSAM, FedASAM, their `+swa` versions and the `mixup_alpha` /
# `cutout_size` options, so the experiment needs only the split and the model.
#
# **How to rerun.** `flcore reproduce fedsam-table-3` builds this page; it trains nothing at any scale.

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
scale = "smoke"  # smoke | small | paper: this page trains nothing, so it is the same at every scale
device = "auto"  # auto | cpu | cuda
seeds = [0]
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
from flcore.papers.fedsam import results as results
from flcore.report.page import Page

page = Page.from_parameters("fedsam-table-3", globals())

# %% [markdown]
# ## What it needs, and why it is not regenerated here

# %%
results.show_heavy_needs(page)

# %% [markdown]
# ## Published values

# %%
results.show_published_only(page, "Published accuracy (%) on CIFAR-100-PAM; the order of the Mixup and Cutout "
                                  "blocks is read from rotated labels and unverified.",
                            index=["augmentation", "algorithm"],
                            columns=["local_epochs", "clients_per_round", "checkpoint"], values="accuracy")
