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
# # Table 6: data-set statistics
#
# **What the paper says.** FedLESAM's Table 6 (App. C.1) summarises its four data sets:
# CIFAR-10 and CIFAR-100 (60,000 images, 10 and 100 classes), OfficeHome (15,588 images, 65
# classes, 4 domains) and DomainNet (586,575 images, 345 classes, 6 domains). The text
# conversion printed the image sizes without their multiplication signs ("33232",
# "3224224"); those cells are left empty with a note and are not compared.
#
# **How it is made here.** The published table is a data file transcribed from the paper
# (`flcore/papers/fedlesam/published/fedlesam-table-6.csv`). Flcore's side loads each data set
# with flcore's own loader (`flcore.data.load_dataset`, from `data_root`; nothing is
# downloaded) and counts the images of its training and test sets, its classes and the shape
# of one image. Where the CIFAR files are not there, the row says so and is not checked.
# OfficeHome and DomainNet (the paper's domain-generalisation data sets, trained with a
# pre-trained ViT) are *not in flcore*.
#
# **How to rerun.** `flcore reproduce fedlesam-table-6 --data-root DIR` (no training; the
# scale changes nothing).

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
data_root = "data"  # CIFAR folder (the files are read, never downloaded)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
from flcore.papers.fedlesam.config_tables import show_statistics
from flcore.report.page import Page
from flcore.reproduction.published import source

page = Page.from_parameters("fedlesam-table-6", globals())

# %% [markdown]
# ## Published beside flcore

# %%
table = show_statistics(page, root=data_root)
page.note(f"Published values: {source('fedlesam-table-6')['source']}.")
