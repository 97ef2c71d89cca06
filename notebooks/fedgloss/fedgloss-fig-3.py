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
# # Figure 3: illustration of FedGloSS
#
# **What the paper shows.** "Illustration of FedGloSS. The model w^t is perturbed using
# Delta~_w^{t-1}. The sharpness-aware direction (dashed) is used to compute w^{t+1} (solid),
# which lands in a flat region. Compared to FedAvg." A sketch of a loss landscape with a
# sharp and a flat basin: FedAvg's step from w^t follows the clients' average pseudo-gradient
# into the nearer, sharp basin; FedGloSS first moves the server model along the previous
# round's normalized pseudo-gradient, w~^t = w^t + rho_s Delta~^{t-1} / ||Delta~^{t-1}||
# (the ascent of server-side SAM, approximated without an extra exchange with the clients),
# lets the clients train from the perturbed model, and applies the resulting
# sharpness-aware pseudo-gradient (dashed) to the *unperturbed* w^t, so that w^{t+1} (solid)
# lands in the flat basin.
#
# **Why there is nothing to compute.** The figure is an illustration without data (class
# *schematic*): no run, no published number. Its steps are the ones flcore runs as the
# method `fedgloss-sam` (and `fedgloss-sgd` with SGD clients); the experiments that measure
# what the sketch claims -- flatter global minima, faster training at FedAvg's
# communication -- are Tables 3, 5, 6 and 8 and Figures 4, 7 and 19.
#
# **How to rerun.** Nothing to run: `flcore reproduce fedgloss-fig-3` rebuilds this page.

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
from flcore.papers.fedgloss.config_tables import fig3_steps
from flcore.report.page import Page

page = Page.from_parameters("fedgloss-fig-3", globals())

# %% [markdown]
# ## The steps of the figure, as flcore runs them
#
# The parts of the registered methods the sketch depicts (see the method catalogue for each
# part): the server perturbation from the previous pseudo-gradient, the clients' training,
# the ADMM correction and the server's update of the unperturbed model.

# %%
steps = fig3_steps()
page.table(steps, "FedGloSS adds the server-side perturbation (P6) and ADMM (C3, S6) to FedAvg at FedAvg's "
                  "communication; NaiveFedGloSS (P6x) computes the same perturbation with a second exchange.",
           show=steps.set_index("method"))
page.note("The figure itself is not redrawn: it is a hand-drawn sketch whose landscape has no data behind it.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
