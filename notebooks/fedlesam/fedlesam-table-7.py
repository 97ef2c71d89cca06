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
# # Table 7: stored memory, communication and backpropagations relative to FedAvg
#
# **What the paper says.** FedLESAM's Table 7 (App. E.3) lists, relative to FedAvg, the
# memory a client stores, the communication per round and the backpropagations per local
# step of eight methods. FedLESAM needs one backpropagation per step, like FedAvg, while
# every SAM-based method needs two; its variants FedLESAM-S and FedLESAM-D store and send as
# much as FedGAMMA and FedSMOO.
#
# **How it is made here.** The published table is a data file transcribed from the paper
# (`flcore/papers/fedlesam/published/fedlesam-table-7.csv`). Flcore's side is read from each
# method's recipe (`flcore.algorithms.get_method`):
#
# - *backpropagation*: `grad_evals_per_step` over FedAvg's;
# - *communication*: uploads plus downloads per round (`flcore.config.traffic_of`) over FedAvg's two;
# - *stored memory*: the model, plus every model-sized table the method keeps per client
#   across rounds (`flcore.config.client_state_of` entries of shape `[N, P]`), plus every vector the client
#   downloads beyond the global model (`flcore.reproduction.method_costs.client_memory`).
#
# The paper does not state its counting rule; this one gives its values for six of the
# eight methods. The two others differ because flcore communicates less: MoFedSAM sends
# one model up and two down (the momentum is broadcast), 1.5 times FedAvg -- the FedGF
# paper's Table 3 counts it the same way (1 + 2) -- where this table rounds to 2; and
# FedLESAM-D, built on FedDyn, needs nothing beyond the model in either direction, where the
# paper lists 2 (and so one more stored vector). See *Known differences*.
#
# **How to rerun.** `flcore reproduce fedlesam-table-7` (no training; the scale changes nothing).

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
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
from flcore.papers.fedlesam.method_costs import FEDLESAM_METHODS, show_relative_costs
from flcore.report.page import Page
from flcore.reproduction.method_costs import methods_behind
from flcore.reproduction.published import source

page = Page.from_parameters("fedlesam-table-7", globals())

# %% [markdown]
# ## Published beside flcore

# %%
table = show_relative_costs(page)

# %% [markdown]
# ## Where flcore's values come from

# %%
evidence = methods_behind(list(FEDLESAM_METHODS), FEDLESAM_METHODS)
page.table(evidence, "The flcore method behind each column: its parts, what it sends per round, its gradient "
                     "evaluations per local step and the model-sized state it keeps per client; stored memory is "
                     "1 + the client tables + the downloads beyond the model.")
page.note(f"Published values: {source('fedlesam-table-7')['source']}.")
