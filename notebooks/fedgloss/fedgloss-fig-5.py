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
# # Figure 5: FedGloSS and FedSMOO client models on local and global data
#
# **What the paper says.** Figure 5 draws the same local-versus-global view for FedGloSS (a, b; FedSAM's
# client model of the same class as a net over the global loss) and FedSMOO (c, d;
# FedGloSS's client model as the net), clients "sea" and "snail" of the last round,
# CIFAR-100 alpha = 0 with SAM on the clients, CNN: FedGloSS's client models are consistent
# -- flat on the global data as on their own -- better than FedSMOO's. The paper gives
# surfaces only, no numbers.
#
# **How it is made here.** The recorded runs at alpha = 0 (each method's preset, 5 clients
# per round) save the 5 client models of the last round (`snapshot_rounds`). For a client
# model, `L(w_k + a d1 + b d2)` for `a, b` in `[-1, 1]` on its own training data and on the
# pooled training data of all clients (a subset below the paper scale), along the same two
# filter-normalised random directions (`flcore.analysis.landscape.landscapes_on_datasets`);
# the reference client model gets the same random draws, rescaled to it. The paper's
# clients are matched to ours by their position in the last round (ours hold other classes;
# the titles say which). At the `small` and `smoke` scales MNIST-1D stands in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedgloss-fig-5 --scale small`; `--scale paper` on a GPU.

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
seeds = [0]  # the paper reports 3 seeds; one below the paper scale
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
workers = None  # runs trained at once on a CPU; None: one per core
data_root = "data"  # CIFAR folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
from flcore.papers.fedgloss import analysis as fa
from flcore.report.page import Page

page = Page.from_parameters("fedgloss-fig-5", globals())
PANELS = [('FedGloSS-SAM', [1, 2], 'FedSAM'), ('FedSMOO', [1, 2], 'FedGloSS-SAM')]  # (method, client positions, reference method)

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
page.table(runs[["algorithm", "alpha", "seed", "status", "mean_last_100", "run_id"]],
           f"The recorded runs (last round's client models saved); {int((runs['status'] == 'finished').sum())} of "
           f"{len(runs)} finished.")

# %% [markdown]
# ## Local and global landscapes of the client models

# %%
finding = fa.show_client_landscapes(page, runs, seeds[0], PANELS, scale)

# %% [markdown]
# ## What we found

# %%
lines = [f"At the **{scale}** scale {finding}."]
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
