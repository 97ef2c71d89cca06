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
# # Figure 3: schematic of MoFedSAM, FedSMOO and FedGF
#
# **What the paper shows.** Figure 3 ("Schematic of MoFedSAM, FedSMOO, and FedGF. The gray line
# illustrates the loss landscape of local distribution.") is an illustration without data. On
# a client's loss curve it draws the local updates (black arrows), the gradient taken at the
# perturbed point (blue) and what each method adds to local SAM:
#
# - **MoFedSAM** moves along the global momentum, the server's last update, after the local
#   SAM step (green arrow);
# - **FedSMOO** corrects the local perturbation towards a global one with a correction
#   gradient G_c that it learns with auxiliary dual variables;
# - **FedGF** perturbs along the reverse of the last global update, `Delta^r = w^{r-1} - w^r`
#   (the orange dotted arrow, marker (g)), a surrogate of the global gradient, and takes the
#   local gradient at a point between the local and the global perturbed points (Eq. 12),
#   weighted by the coefficient c it adapts from the client-to-global distance.
#
# **How it is made here.** Nothing is drawn or trained: the page describes the figure and,
# below, the parts of flcore's methods that implement what it depicts, read from the method
# registry (the recipes the engine runs; the Methods pages describe each part).
#
# **How to rerun.** `flcore reproduce fedgf-fig-3` (no training; the scale changes nothing).

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
from flcore.papers.fedgf.method_costs import schematic_methods
from flcore.report.page import Page

page = Page.from_parameters("fedgf-fig-3", globals())

# %% [markdown]
# ## The methods the figure depicts, as flcore runs them

# %%
page.table(schematic_methods(), "The three methods of the schematic in flcore's registry: each takes two gradient evaluations per "
                  "local step (the SAM ascent and the descent at the perturbed point); they differ in where the "
                  "perturbation points (parts P*) and what corrects the update (parts C*).")
