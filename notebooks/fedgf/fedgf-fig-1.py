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
# # Figure 1: FedSAM's accuracy and flatness discrepancy against alpha
#
# **What the paper says.** Figure 1 motivates FedGF: on CIFAR-100, as the split grows more
# heterogeneous (smaller Dirichlet alpha), FedSAM's test accuracy falls and the flatness
# discrepancy Delta_F of its global model rises -- flat local models no longer make a flat
# global one. The paper gives curves only, without the alphas, round or clients used.
#
# **How it is made here.** FedSAM runs of the FedSAM CNN protocol (5 clients per round) over a
# sweep of alphas: at the `paper` scale the CIFAR-100 split files of the paper's code (alpha 0,
# 0.5, 1, 2, 5, 10, 100, 1000); below it MNIST-1D stands in and the sweep is the alphas the
# FedSAM pages already train (no extra training). Accuracy is the mean of the last 100 rounds;
# Delta_F is computed from each run's final state as on Table 2's page
# (`flcore.papers.fedgf.analysis.global_flatness`). Where the claims' verdicts read several
# seeds of an alpha (three at the `small` scale), the figure draws their mean and every seed.
#
# **How to rerun.** `flcore reproduce fedgf-fig-1 --scale small`; `--scale paper` on a GPU.

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
from flcore.papers.fedgf import results as fc
from flcore.report import algorithm_color
from flcore.report.ordering import kendall_tau
from flcore.report.page import Page

page = Page.from_parameters("fedgf-fig-1", globals())

# %% [markdown]
# ## The runs and their flatness discrepancy

# %%
runs = page.runs()  # with the seeds the verdicts read
sweep = fc.alpha_sweep(runs)
page.table(sweep, f"FedSAM at the {scale} scale, one row per run (the seeds the claims' verdicts read): accuracy (%, "
                  f"mean of the last 100 rounds) and Delta_F of the final global model for each alpha and seed.")
mean = fc.sweep_means(sweep)
page.table(mean, "Per alpha, the mean over the seeds with its sd and n (what the figure draws).",
           show=fc.sweep_means_text(mean))

# %% [markdown]
# ## The figure

# %%
fig = fc.sweep_figure(sweep, algorithm_color("FedSAM"))
data_name = page.stand_in.short_name("CIFAR-100")
tau_acc = kendall_tau(list(mean["alpha"]), list(mean["accuracy"])) if len(mean) > 1 else float("nan")
tau_df = kendall_tau(list(mean["alpha"]), list(-mean["flatness_discrepancy"])) if len(mean) > 1 else float("nan")
page.figure(fig, f"FedSAM on {data_name}, the mean over the seeds (lines) and every seed (dots): accuracy against "
                 f"alpha (Kendall's tau of the means with alpha {tau_acc:.2f}; the paper: accuracy rises with alpha) "
                 f"and Delta_F (tau of -Delta_F with alpha {tau_df:.2f}; the paper: Delta_F falls as alpha grows).",
            alt=f"Line chart over alpha values {', '.join(f'{a:g}' for a in mean['alpha'])}: FedSAM's mean accuracy "
                + ", ".join(f"{v:.1f}%" for v in mean["accuracy"]) + " and mean flatness discrepancy "
                + ", ".join(f"{v:.3f}" for v in mean["flatness_discrepancy"])
                + " (seeds per alpha: " + ", ".join(str(n) for n in mean["accuracy n"]) + "; each seed a dot).")

# %% [markdown]
# ## What we found

# %%
verdicts = page.check_claims()
lines = [f"At the **{scale}** scale FedSAM's accuracy follows alpha with Kendall's \u03c4 = {tau_acc:.2f} and its "
         f"flatness discrepancy falls with alpha with \u03c4 = {tau_df:.2f} (1 for both is the paper's picture). "
         "The paper gives curves only, so only these trends are compared."]
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
