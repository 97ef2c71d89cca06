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
# # Figure 15: Hessian spectra of the global model at alpha = 0.5
#
# **What the paper says.** Appendix Figure 15 of the FedSAM paper completes Figure 5 with
# the third heterogeneity level of CIFAR-100, alpha = 0.5: the top 50 Hessian eigenvalues
# of the global model against their index, for FedAvg (one and two local epochs) and
# FedASAM. As at alpha = 0 and 1k, ASAM's spectrum lies below FedAvg's. The figure has no
# numbers.
#
# **How it is made here.** The final global models of Table 2's runs (CIFAR-100 protocol,
# 5 clients per round), read from the run store; the spectra are the ones Table 1 reads
# (cached, computed once). The Hessian is that of the mean cross-entropy on a fixed
# subset of the training set. At the `paper` scale the top 50 come from deflated power
# iteration with at most 20 products each, the paper's method; below it Lanczos gives the
# top **10** at the `small` scale (5 at `smoke`; 50 would cost minutes per model on a
# CPU), so the curves are shorter
# than the paper's. Below the `paper` scale MNIST-1D stands in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedsam-fig-15 --scale small`; `--scale paper` on a
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
seeds = [0]  # the paper reports one run per configuration
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
workers = None  # runs trained at once on a CPU; None: one per core
data_root = "data"  # CIFAR folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
from flcore.papers.fedsam import analysis as fedsam_analysis
from flcore.report.page import Page
from flcore.reproduction.run_geometry import geometry_settings

page = Page.from_parameters("fedsam-fig-15", globals())

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
page.table(runs[["algorithm", "alpha", "status", "mean_last_100", "run_id"]],
           f"The global models of the figure: {int((runs['status'] == 'finished').sum())} of {len(runs)} runs "
           "finished; mean_last_100 is their test accuracy (a fraction).")

# %% [markdown]
# ## The spectra
#
# One line per algorithm: the eigenvalues from the largest down.

# %%
table = fedsam_analysis.show_spectra(page, runs, scale, device=page.analysis_device, data_root=data_root)

# %% [markdown]
# ## What we found

# %%
page.findings(fedsam_analysis.spectrum_findings(table, geometry_settings(scale).top_k),
              empty="No finished runs to draw.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
