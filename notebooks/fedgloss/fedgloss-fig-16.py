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
# # Figure 16: accuracy vs rounds, CIFAR-100, CNN
#
# **What the paper says.** As Figure 15 on CIFAR-100 at alpha = 0 and alpha = 0.5: SAM-based
# (a, c) and SGD-based (b, d) methods, centralized runs dashed. "FedGloSS consistently
# achieves the best performance." FedDyn, and SCAFFOLD and FedGAMMA at alpha = 0, do not
# converge. The figure has no numbers; Table 3 has the final values.
#
# **How it is made here.** The runs of Table 3 (`gloss-cnn-main`) and the centralized
# references (dashed: final accuracy). Below the `paper` scale MNIST-1D stands in for
# CIFAR-100, only alpha = 0 runs, and those runs are the CIFAR-10 alpha = 0 runs of
# Figure 15 (the same configuration).
#
# **How to rerun.** `flcore reproduce fedgloss-fig-16 --scale small`; `--scale paper` on a
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
DATASET_LABEL = "CIFAR-100"

# %%
from flcore.papers.fedgloss import results as gloss
from flcore.report.page import Page

page = Page.from_parameters("fedgloss-fig-16", globals())

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
