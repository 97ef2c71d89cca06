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
# # Table 8: federated semantic segmentation on Cityscapes and IDDA
#
# **What the paper says.** Table 8 trains BiSeNetV2 for semantic segmentation on Cityscapes
# and IDDA with the FedDrive splits (uniform and heterogeneous clients; IDDA tested on seen
# and unseen country or rainy domains): "ASAM performs best both on Cityscapes and
# heterogeneous IDDA. The best performance is obtained combining ASAM + SWA with SiloBN,
# keeping the BatchNorm statistics local to each client." Most SAM / ASAM / SWA rows are
# unreadable in the paper's text and are left out.
#
# **Why it is not regenerated.** The segmentation data sets need registration or separate
# downloads and flcore covers image classification only.
#
# **How to rerun.** `flcore reproduce fedsam-table-8` builds this page; it trains nothing at any scale.

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

page = Page.from_parameters("fedsam-table-8", globals())

# %% [markdown]
# ## What it needs, and why it is not regenerated here

# %%
results.show_heavy_needs(page)

# %% [markdown]
# ## Published values

# %%
results.show_published_only(page, "Published mIoU (%) at 1.5k rounds; cells unreadable in the text are left out.",
                            index=["split", "algorithm"], columns="column", values="miou")
