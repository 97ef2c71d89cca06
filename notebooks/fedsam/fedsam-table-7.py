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
# # Table 7: Landmarks-User-160k
#
# **What the paper says.** Table 7 reports FedAvg, FedSAM and FedASAM on Landmarks-User-160k
# at 5k rounds and with SWA started at 75 % or 100 % of the rounds, beside a centralized
# reference: "Results confirm the benefits of applying client-side sharpness-aware
# optimizers, especially in combination with server-side weight averaging with an
# improvement in final accuracy of up to 7%." Only the centralized reference (74.03 %) is
# readable in the paper's text; the federated cells are lost, so this page shows no
# federated number rather than a guessed one.
#
# **Why it is not regenerated.** The data set and the ImageNet-pre-trained MobileNetV2-GN are
# not obtainable offline.
#
# **How to rerun.** `flcore reproduce fedsam-table-7` builds this page; it trains nothing at any scale.

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

page = Page.from_parameters("fedsam-table-7", globals())

# %% [markdown]
# ## What it needs, and why it is not regenerated here

# %%
results.show_heavy_needs(page)

# %% [markdown]
# ## Published values

# %%
results.show_published_only(page, "Published accuracy (%) on Landmarks-User-160k: only the centralized reference "
                                  "survives the text conversion.")
