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
# # Since these papers: newer flat-minima methods on FedSAM's Table 2 protocol
#
# **What this page asks.** Flat-minima methods for federated learning have kept coming since
# the five papers of this book; those with a public description flcore implements are listed
# by `flcore methods` and on the method catalog page of the reference (WIMA, FedSWA,
# FedMoSWA, FedNSAM, ...). This page puts each of them on the protocol of FedSAM's Table 2
# at its two most heterogeneous CIFAR-10 columns (Dirichlet alpha = 0 and 0.05, 5 clients
# per round), three seeds each, and asks of each two questions stated as the claims are:
# does it beat **FedSAM**, and does it beat **FedAvg**?
#
# **How it is made here.** FedAvg and FedSAM are Table 2's own runs (the same
# configurations, so the same runs of the store: nothing is trained twice); the newer
# methods run with their registry defaults, none tuned here. Each question is decided by the
# book's paired rule (the Claims page): the per-seed difference over the
# seeds both cells ran, its 95 % t interval, *holds*, *fails*, *absent* or *inconclusive*.
# These questions are the page's, not claims of a paper: no published gap is printed.
#
# **How to rerun.** `flcore reproduce since-these-papers --scale small` (minutes on a CPU);
# `--scale paper` runs CIFAR-10 with the CNN on a GPU.

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
seeds = [0]  # the page adds the claims' seeds of the scale (three at small)
store = None  # run store folder; None: $FLCORE_STORE, else ./runs
workers = None  # runs trained at once on a CPU; None: one per core
data_root = "data"  # CIFAR folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
import pandas as pd

from flcore.papers.fedsam import pages as since
from flcore.report.page import SMOKE_NOTE, Page, claims_markdown, totals_text
from flcore.reproduction.claims import evaluate, verdict_totals

page = Page.from_parameters("since-these-papers", globals())

# %% [markdown]
# ## The runs
#
# One row per method, alpha and seed: finished runs come from the store, missing ones are
# trained now.

# %%
specs = page.artifact.runs(scale, seeds)
runs = page.runs(specs)
status = page.run_status(runs)

# %% [markdown]
# ## Settings used
#
# What every run shares, then what differs between the methods (their own hyper-parameters,
# at the registry's defaults).

# %%
settings = page.settings("the methods'", by=("algorithm",), specs=specs)

# %% [markdown]
# ## Accuracy
#
# Test accuracy (%, the mean over the last rounds as in Table 2), the mean and standard
# deviation over the seeds that finished, per method and alpha.

# %%
finished = runs[runs["status"] == "finished"]
order = [*reversed(since.BASELINES), *(a.label for a in since.newer_algorithms())]
rows = []
for label in order:
    row = {"method": label}
    for alpha in since.ALPHAS:
        values = 100.0 * finished[(finished["algorithm"] == label) & (finished["alpha"] == alpha)]["mean_last_100"]
        row[f"alpha {alpha:g}: mean"] = values.mean() if len(values) else float("nan")
        row[f"alpha {alpha:g}: sd"] = values.std() if len(values) > 1 else float("nan")
        row[f"alpha {alpha:g}: seeds"] = len(values)
    rows.append(row)
accuracy = pd.DataFrame(rows).set_index("method")
page.table(accuracy, "Accuracy (%) of each method at alpha = 0 and 0.05 (CIFAR-10 protocol, 5 clients per round).")

# %% [markdown]
# ## Verdicts
#
# Each newer method against FedSAM and against FedAvg, at both alphas, by the paired rule.
# A comparison with fewer than three shared seeds is *indicative* only: it never holds or fails.

# %%
results = [evaluate(claim, scale, store, seeds) for claim in since.page_claims()]
page.note(claims_markdown(results, scale))

# %% [markdown]
# ## What the small scale can and cannot say
#
# Below the `paper` scale MNIST-1D with its small CNN stands in for CIFAR-10 with the CNN:
# the same label skew (alpha = 0 and 0.05), 5 clients per round, the scale's rounds, and every
# method at its registry defaults. A verdict here says whether a method's *effect* shows on a
# small, strongly skewed problem at an equal number of rounds, under a paired test on three
# seeds whose smallest detectable gap is a few points: *holds* is evidence that the mechanism
# helps even here; *fails* or *absent* says it does not at this size and budget, not that
# its paper's numbers are wrong; *inconclusive* says three seeds cannot tell. The page cannot
# speak for the methods' own settings (CIFAR-100, Tiny-ImageNet, ResNets, hundreds of rounds),
# for tuned hyper-parameters (their defaults were chosen on those settings, not here), or for
# cost: the comparisons are at equal rounds, not equal computation (FedNSAM, like FedSAM,
# takes two gradients per step; FedMoSWA sends twice FedAvg's traffic). The `paper` scale runs
# the same page on CIFAR-10 with one seed per cell.

# %%
totals = verdict_totals(results)
lines = [f"At the **{scale}** scale, of the {len(results)} questions ({len(since.newer_algorithms())} newer methods "
         f"against FedSAM and FedAvg): {totals_text(totals)}."]
if scale == "smoke":
    lines.append(SMOKE_NOTE)
page.note(" ".join(lines))
