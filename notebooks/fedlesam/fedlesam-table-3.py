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
# # Table 3: OfficeHome and DomainNet, leave one domain out, with a pretrained ViT
#
# **What the paper says.** Table 3 evaluates the 12 methods of Table 2 on domain
# generalisation: OfficeHome (4 domains, 65 classes) and DomainNet (6 domains, 345 classes),
# each domain in turn held out as the test set while the others train -- each training
# domain one client taking part in every round (upper half), or split into 10 clients with
# 20% taking part (lower half). The model is a pretrained ViT-B/32, fine-tuned with SGD (lr
# 0.001, global lr 1, FedAdam 0.1), 5 local epochs, batch 32, 400 rounds, rho tuned per
# method. Its text: FedDyn and FedSMOO overfit on the unseen domain, while FedLESAM
# "outperforms all baselines on all settings", by 2.39 points over the best baseline and
# 7.22 over FedAvg on the target domain "Painting" (upper half).
#
# **No published numbers.** Every numeric cell of Table 3 is missing from our copy of the
# paper's text; only the two numbers of the body above survive, so the page has no table of
# published values.
#
# **Why flcore does not regenerate it.** The experiment needs
#
# - the OfficeHome (15,588 images) and DomainNet (586,575 images) data sets, which are not
#   in torchvision and cannot be downloaded offline;
# - a pretrained ViT-B/32, whose checkpoint (ImageNet-21k, ImageNet-1k, CLIP?) and
#   classifier head the paper does not name, and which is not obtainable here;
# - how a domain is split into 10 clients, which the paper does not state; its official
#   code has no domain-generalisation or ViT code.
#
# So this page trains nothing. The methods themselves are flcore's (the same recipes as
# Table 2); with the data and a checkpoint, a run is a config like Table 2's with the
# data set, model and split replaced.
#
# **How to rerun.** Not regenerable (`flcore reproduce --list` shows it as such).

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
from flcore.papers.fedlesam.config_tables import TABLE3_NEEDS
from flcore.report.page import Page
from flcore.reproduction.inventory import entry as inventory_entry
from flcore.reproduction.published import source

page = Page.from_parameters("fedlesam-table-3", globals())
entry = inventory_entry("fedlesam-table-3")

# %% [markdown]
# ## What the experiment needs

# %%
page.table(TABLE3_NEEDS, f"What Table 3 needs and why it is not regenerated: it {entry.not_regenerable}.")
page.note(f"Published values: {source('fedlesam-table-3')['value']}.")
