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
# # Figure 15: accuracy vs rounds, CIFAR-10, CNN
#
# **What the paper says.** Test accuracy against rounds on CIFAR-10 with the CNN at
# alpha = 0 and alpha = 0.05, SAM-based methods (a, c) and SGD-based methods (b, d) in
# separate panels, with centralized runs as dashed references and FedSMOO with and
# without its rho warm-up (+wp). "FedGloSS consistently achieves the best performances and
# convergence speedup in each group." The figure has no numbers; Table 3 has the final
# values.
#
# **How it is made here.** The runs of Table 3 (`gloss-cnn-main`), read from the run store;
# the dashed line is the final accuracy of centralized SAM on the pooled training set (and
# of centralized SGD in the SGD panels at the `paper` scale; the paper does not name the
# optimizers of its references). FedSMOO+wp is not drawn: flcore's FedSMOO has no rho
# warm-up. Below the `paper` scale MNIST-1D stands in for CIFAR-10 and the alpha = 0.05
# SGD panel lacks FedDyn and SCAFFOLD (not run at that scale).
#
# **How to rerun.** `flcore reproduce fedgloss-fig-15 --scale small`; `--scale paper` on a
# GPU.

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
seeds = [0]  # the paper reports the mean of 3 seeds; one seed below the paper scale
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
workers = None  # runs trained at once on a CPU; None: one per core
data_root = "data"  # CIFAR folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
DATASET_LABEL = "CIFAR-10"

# %%
from flcore.papers.fedgloss import results as gloss
from flcore.report.page import Page

page = Page.from_parameters("fedgloss-fig-15", globals())

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
shown = page.runs_table(runs, ["algorithm", "alpha", "status", "rounds_done", "mean_last_100", "run_id"],
                        "The runs behind the curves: {finished} finished of {total}; mean_last_100 is the mean test "
                        "accuracy of the last 100 rounds (a fraction).", distinct=["algorithm", "alpha"])

# %% [markdown]
# ## Test accuracy against rounds
#
# One panel per heterogeneity level and client optimizer; the dashed horizontal line is the
# centralized reference of the panel's optimizer.

# %%
final, leaders = gloss.show_accuracy_curves(page, runs, DATASET_LABEL, scale, store=store)

# %% [markdown]
# ## What we found

# %%
page.findings([f"At the **{scale}** scale the highest final accuracy per panel: "
               f"{gloss.accuracy_leaders_text(final, leaders)}."])

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
