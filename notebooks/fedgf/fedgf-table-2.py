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
# # Table 2: LPF, lambda_max and flatness discrepancy on CIFAR-100
#
# **What the paper says.** Table 2 measures how flat the final global model is on CIFAR-100,
# non-IID (alpha = 0) and IID (the paper's alpha = 10), for FedAvg and the flatness-seeking
# methods: the low-pass-filter sharpness LPF of Bisla et al. (the loss averaged over Gaussian
# perturbations of the weights), the top Hessian eigenvalue lambda_max and FedGF's flatness
# discrepancy Delta_F (Definition 1, Eq. 7: how much the global model's loss rises in a
# rho-ball beyond what the local models' losses rise in theirs). In the non-IID case FedGF
# has the lowest LPF (1.36) and lambda_max (14.07) and nearly the lowest Delta_F (0.13 against
# FedSMOO's 0.12); Delta_F is larger non-IID than IID for every method.
#
# **How it is made here.** The runs are Table 1's (5 clients per round). Each finished run's
# final global model is loaded from the store and analysed by
# `flcore.papers.fedgf.analysis.global_flatness`: lambda_max by power iteration on the
# Hessian of the training loss, LPF with sigma = 0.01 (Bisla et al.'s value; the paper does
# not give its own), Delta_F with one SAM step in a ball of the FedSAM preset's radius for
# every method, the local models being those of one further round of the run's own method
# from its final state. The training loss is taken on a seeded subset of the pooled client
# data (see the settings below). Results are cached beside each run. Each cell is the mean
# over the seeds the claims' verdicts read (three at the `small` scale), with its sd and n.
# Below the paper scale the page compares the methods' orderings (lower is better).
#
# **How to rerun.** `flcore reproduce fedgf-table-2 --scale small`; `--scale paper` on a GPU.

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
from flcore.config import chance_accuracy
from flcore.papers.fedgf import results as fc
from flcore.papers.fedgf.analysis import LPF_SIGMA, settings_for
from flcore.papers.fedsam import runs as fedsam
from flcore.report import format_comparison
from flcore.report.ordering import ordering_table
from flcore.report.page import Page, verdict_counts
from flcore.reproduction.published import published, source

page = Page.from_parameters("fedgf-table-2", globals())

# %% [markdown]
# ## The runs and their analysis
#
# One row per run (the seeds the claims' verdicts read); the tables below average them per cell.

# %%
runs = page.runs()  # with the seeds the verdicts read
analysis = settings_for(scale)
ours = fc.flatness_runs(runs)
page.table(ours, f"Flatness of each run's final global model at the {scale} scale: accuracy (%, mean of the last 100 "
                 f"rounds), training loss on {analysis['samples']} pooled client samples, LPF (sigma = {LPF_SIGMA}, "
                 f"{analysis['lpf_draws']} draws), lambda_max ({analysis['power_iters']} power iterations) and Delta_F "
                 "(radius rho).")

# %% [markdown]
# ## Published beside ours
#
# Lower is flatter in every column; ours is the mean over the seeds the verdicts read, with
# its sd and n. Non-IID is alpha = 0, IID the paper's alpha = 10 (the CIFAR-100 split file
# with concentration 1000). A method whose accuracy sits at chance (the 95 % interval on its
# seeds' mean contains it) is not ranked for flatness: a model that learned nothing can be flat.

# %%
paper_values = published("fedgf-table-2")
comparison = fc.flatness_comparison(ours, paper_values)
chance = chance_accuracy(fedsam.dataset_for("CIFAR-100", scale))
at_chance = fc.at_chance_methods(ours, chance)
non_iid = comparison[comparison["alpha"] == 0]
page.table(comparison, show=format_comparison(comparison, ["alpha", "algorithm"], ["metric"],
                                              index_order={"algorithm": list(paper_values["algorithm"].unique())},
                                              delta=page.stand_in.is_paper),
           caption=f"LPF, lambda_max and Delta_F, paper beside ours (mean \u00b1 sd over the seeds, n). Non-IID, the "
                   f"paper's lowest lambda_max is {fc.flattest_learning(non_iid, 'lambda_max', 'paper')}'s, ours is "
                   f"{fc.flattest_learning(non_iid, 'lambda_max', 'ours', at_chance)}'s; the lowest LPF: paper "
                   f"{fc.flattest_learning(non_iid, 'lpf', 'paper')}, ours "
                   f"{fc.flattest_learning(non_iid, 'lpf', 'ours', at_chance)}."
                   + fc.at_chance_text(at_chance, chance),
           downloads={"published": paper_values, "ours": ours})
page.note(f"Published values: {source('fedgf-table-2')['source']}.")

# %% [markdown]
# ## Orderings
#
# For each metric and alpha, the methods from flattest to sharpest as the paper ranks them
# and as our seed means do (the methods at chance left out), and Kendall's tau between the
# two rankings.

# %%
ranked = comparison[[(a, m) not in at_chance for a, m in zip(comparison["alpha"], comparison["algorithm"])]]
orderings = ordering_table(ranked.assign(paper=-ranked["paper"], ours=-ranked["ours"]),  # lower is better
                           ["metric", "alpha"])
mean_tau = orderings["Kendall's \u03c4"].mean() if len(orderings) else float("nan")
page.table(orderings, show=orderings.set_index(["metric", "alpha"]),
           caption=f"The methods from flattest to sharpest, paper and ours; mean Kendall's \u03c4 over the "
                   f"{len(orderings)} blocks: {mean_tau:.2f}." if len(orderings) else
                   "The methods from flattest to sharpest, paper and ours: no block has two ranked methods.")

# %% [markdown]
# ## What we found

# %%
verdicts = page.check_claims()
agreement = (f"agree with the paper's with a mean Kendall's \u03c4 of {mean_tau:.2f}" if len(orderings)
             else "cannot be compared with the paper's (no block has two ranked methods)")
lines = [f"At the **{scale}** scale the flatness rankings of our seed means {agreement}; {verdict_counts(verdicts)}."]
if not page.stand_in.is_paper:
    lines.append("Flatness is measured on MNIST-1D models here, whose scale of loss and curvature differs from the "
                 "CIFAR CNN's: compare the orderings, not the numbers.")
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
