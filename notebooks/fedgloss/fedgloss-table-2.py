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
# # Table 2: overview of SAM-based FL methods
#
# **What the paper lists.** For each federated method built on SAM: the server optimizer,
# the client optimizer, whether it targets global flatness, the communication per round
# and the local computation per step, both relative to FedAvg. FedGloSS is the only one
# with SAM on the *server*; it communicates as much as FedAvg and accepts any client
# optimizer.
#
# **How it is made here.** Flcore's side is read from its method registry, never typed in:
# the server optimizer is SAM where a recipe has the server-side SAM step (part S8) and
# SGD on the pseudo-gradient otherwise; the client optimizer comes from the local parts
# (P1/P3: SAM ascent; with FedSpeed's gradient mixing C6: "similar to SAM"; P0: SGD); the
# communication cost is (model-sized vectors down + up) / 2 per participating client and
# round; the local computation is the number of gradient evaluations per local step. The
# paper's FedGloSS row is flcore's two variants, `fedgloss-sgd` and `fedgloss-sam`. The
# *Global Flatness* column is not compared: its marks were lost in the text conversion,
# and it is a property of the method's objective, not of a recipe. The published table is
# a data file (`flcore/papers/fedgloss/published/fedgloss-table-2.csv`).
#
# **How to rerun.** `flcore reproduce fedgloss-table-2` (no training; the scale changes nothing).
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
from flcore.papers.fedgloss.config_tables import show_table2
from flcore.report.page import Page
from flcore.reproduction.published import source

page = Page.from_parameters("fedgloss-table-2", globals())

# %% [markdown]
# ## Published beside flcore

# %%
ours = show_table2(page)
page.note(f"Published values: {source('fedgloss-table-2')['source']}.")

# %% [markdown]
# ## The state each method keeps
#
# Communication and computation are not the whole cost: methods with a FedDyn/ADMM dual
# or control variates keep a model-sized vector per client across rounds (stateful
# clients), and the server keeps its own. From `flcore.config.client_state_of` and
# `flcore.config.server_state_of`.

# %%
state = ours[["method", "flcore_methods", "down_up_per_round", "state_kept"]]
keeps = ~ours["state_kept"].str.contains("client none")
stateful, stateless = ", ".join(ours.loc[keeps, "method"]), ", ".join(ours.loc[~keeps, "method"]) or "none"
page.table(state, f"The state flcore's implementations keep across rounds: {keeps.sum()} of {len(ours)} methods "
                  f"keep a vector per client ({stateful}), so their clients must be stateful; stateless: {stateless}.")
