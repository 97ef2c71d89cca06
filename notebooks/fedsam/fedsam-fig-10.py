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
# # Figure 10: convergence of FedAvgM, ASAM and SWA with alpha = 0
#
# **What the paper claims.** Appendix G: with alpha = 0 and 20 clients per round, FedAvgM
# (server momentum 0.9) alone does not learn, but "when combining FedAvgM or FedSAM
# (CIFAR100)/FedASAM (CIFAR10) with SWA, convergence is reached even in the most heterogeneous
# scenarios. FedAvgM + SWA applied to CIFAR10 fails to learn, while adding momentum to
# FedASAM significantly speeds up training." The curves are the runs of Table 6; the figure
# itself has no numbers (the curve set is inferred from the caption).
#
# **How it is made here.** Run group `sam-sota`: FedAvgM, FedAvgM+ASAM and their SWA
# versions, plus FedSAM+SWA (CIFAR-100) and FedASAM+SWA (CIFAR-10), which are Table 2's runs.
# Test accuracy is recorded every `eval_every` rounds and at every one of the last 100.
#
# - `paper`: CIFAR-10 and CIFAR-100, 20 clients per round, the paper's protocol.
# - `small` / `smoke`: MNIST-1D with Table 2's 5 clients per round instead of 20 (so the SWA
#   runs are Table 2's); both CIFAR settings are the same runs at alpha = 0, so one panel shows
#   all six methods.
#
# **How to rerun.** `flcore reproduce fedsam-fig-10 --scale small`; `--scale paper` on a GPU.

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
from flcore.papers.fedsam import results
from flcore.papers.fedsam import runs as fedsam
from flcore.report import ours_accuracy
from flcore.report.page import Page
from flcore.report.plots import accuracy_curves
from flcore.reproduction.artifacts import settings_table
from flcore.reproduction.runner import run_metrics

page = Page.from_parameters("fedsam-fig-10", globals())
order = list(results.FIG10_ALGORITHMS)

# %% [markdown]
# ## The runs
#
# A `diverged` run's loss became non-finite; its curve stops there.

# %%
specs = page.specs()  # the artifact's runs and the seeds the verdicts read
runs = page.runs(specs)
listing = runs[["dataset", "algorithm", "clients_per_round", "status", "rounds_done", "mean_last_100", "run_id"]]
page.table(listing, f"The runs behind the curves: {int((runs['status'] == 'finished').sum())} finished of "
                    f"{len(runs)}; mean_last_100 is the mean test accuracy of the last 100 rounds (a fraction).")
settings = settings_table(specs, by=("algorithm",), grid=("alpha", "per_round", "seed", "dataset"))
page.table(settings, "What differs between the methods' runs; every run shares "
                     + ", ".join(f"`{k}` = {v}" for k, v in settings.attrs["common"].items()) + ".")

# %% [markdown]
# ## Test accuracy against rounds
#
# Solid: the methods; dashed: their SWA versions (same colour).

# %%
panels = list(fedsam.DATASETS) if page.stand_in.is_paper else [results.FIG10_SMALL_PANEL]
metrics = run_metrics(runs[runs["dataset"].isin(panels)], store=store)
data_name = page.stand_in.short_name("CIFAR-10 and CIFAR-100")
if not page.stand_in.is_paper:
    metrics["dataset"] = f"MNIST-1D ({scale} scale, standing in for CIFAR)"
figure = accuracy_curves(metrics, hue="algorithm", col="dataset", hue_order=order)
final = ours_accuracy(runs.drop_duplicates("run_id"), ["dataset", "algorithm"]).set_index(["dataset", "algorithm"])["ours"]
final = final[final.index.get_level_values(0).isin(panels)].dropna().sort_values(ascending=False)
rounds = int(metrics["round"].max()) if len(metrics) else 0
ending = ", ".join(f"{a} ({d}) {v:.1f}%" if page.stand_in.is_paper else f"{a} {v:.1f}%" for (d, a), v in final.items())
page.figure(figure, f"Test accuracy against rounds at alpha = 0 with {results.CLIENTS[scale]} clients per round on "
                    f"{data_name}; mean of the last 100 rounds: {ending}.",
            alt=f"Line chart of test accuracy in percent against communication rounds (0 to {rounds}) on {data_name} "
                f"at alpha = 0, one line per method (SWA versions dashed); the curves end at: {ending}.")

# %% [markdown]
# ## What we found

# %%
reference = "CIFAR-10" if page.stand_in.is_paper else panels[0]  # Table 6's quoted numbers are CIFAR-10's
values = final.xs(reference, level=0).to_dict() if reference in final.index.get_level_values(0) else {}
lines = [f"At the **{scale}** scale (mean test accuracy of the last 100 rounds): {ending}."]
if {"FedAvgM", "FedAvgM+ASAM"} <= set(values):
    lines.append(f"Adding ASAM to FedAvgM changes its accuracy by {values['FedAvgM+ASAM'] - values['FedAvgM']:+.1f} "
                 "points (the paper, Table 6: from 10.00% to 84.89% on CIFAR-10 with 20 clients).")
verdicts = page.check_claims()
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts
#
# The claims on these runs take their published numbers from Table 6 (the same runs).

# %%
page.show_claims()
