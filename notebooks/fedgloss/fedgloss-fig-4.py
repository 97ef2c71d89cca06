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
# # Figure 4: the perturbation approximation error with and without ADMM
#
# **What the paper says.** Figure 4 follows the error of FedGloSS's approximate perturbation over the rounds,
# delta_eps^t = || eps~^t - eps^^t || = rho || Delta~^{t-1}/||Delta~^{t-1}|| - Delta^t/||Delta^t|| ||
# (Eq. 6: the previous round's pseudo-gradient against the current one), for FedGloSS with
# and without the ADMM terms, on CIFAR-10 and CIFAR-100 (CNN). The error decreases over the
# rounds, and more with ADMM, which aligns consecutive pseudo-gradients -- the reason the
# stale direction is a good ascent step. The paper gives curves only, no numbers, and does
# not state alpha or rho.
#
# **How it is made here.** FedGloSS-SAM (with ADMM) and FedGloSS-SAM without ADMM at
# alpha = 0 (each method's preset, 5 clients per round), recording the `delta_eps` probe at
# the evaluation rounds (`probes` in the run's config; the recorded runs train alone). The
# probe compares the normalised previous and current pseudo-gradients of the run
# (`flcore.analysis.probes.server_perturbation_error`), scaled by the server rho. At the
# `small` and `smoke` scales MNIST-1D stands in for CIFAR-10 (the CIFAR-100 curves are run
# at the paper scale only).
#
# **How to rerun.** `flcore reproduce fedgloss-fig-4 --scale small`; `--scale paper` on a GPU.

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

page = Page.from_parameters("fedgloss-fig-4", globals())
PROBE = "delta_eps"

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
page.table(runs[["dataset", "algorithm", "alpha", "seed", "status", "mean_last_100", "run_id"]],
           f"The recorded runs; {int((runs['status'] == 'finished').sum())} of {len(runs)} finished.")

# %% [markdown]
# ## delta_eps (Eq. 6) over rounds

# %%
finding = fa.show_probe_curves(page, runs, seeds[0], PROBE, "delta_eps (Eq. 6)", scale, store=store)

# %% [markdown]
# ## What we found

# %%
lines = [f"At the **{scale}** scale, delta_eps (Eq. 6) {finding}."]
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
