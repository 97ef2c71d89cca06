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
# # Figure 4: convergence in the non-IID case
#
# **What the paper says.** Figure 4 plots test accuracy against communication rounds in the
# pathological non-IID case (alpha = 0) on CIFAR-10 (a) and CIFAR-100 (b): FedGF climbs much
# faster than the other methods, especially on CIFAR-100, where its adaptive c is pushed to 1
# early. The paper gives curves only and does not name the methods drawn or the clients per
# round; we draw FedAvg and the flatness-seeking methods of Table 2 with 5 clients per round.
#
# **How it is made here.** The curves are the per-round test accuracies the runs of Table 1
# logged (evaluation every few rounds, every round in the last 100); a method the claims'
# verdicts read at several seeds (three at the `small` scale) is drawn as the seeds' mean with
# a band. Below the paper scale MNIST-1D stands in for both data sets, whose alpha = 0 runs are
# then the same: one panel.
#
# **How to rerun.** `flcore reproduce fedgf-fig-4 --scale small`; `--scale paper` on a GPU.

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
from flcore.papers.fedgf import runs as fedgf
from flcore.report import ours_accuracy
from flcore.report.page import Page
from flcore.report.plots import accuracy_curves
from flcore.reproduction.runner import run_metrics

page = Page.from_parameters("fedgf-fig-4", globals())

# %% [markdown]
# ## The runs

# %%
runs = page.runs()  # with the seeds the verdicts read
listing = runs[["dataset", "algorithm", "seed", "status", "rounds_done", "mean_last_100", "run_id"]]
page.table(listing, f"The runs behind the curves: {int((runs['status'] == 'finished').sum())} finished of "
                    f"{len(runs)}; mean_last_100 is the mean test accuracy of the last 100 rounds (a fraction).")

# %% [markdown]
# ## The figure

# %%
panels = page.stand_in.distinct(fedgf.DATASETS)
metrics = run_metrics(runs[runs["dataset"].isin(panels)], store=store)
if not page.stand_in.is_paper:
    metrics["dataset"] = f"MNIST-1D ({scale} scale, standing in for CIFAR)"
order = [a for a in fedgf.FLATNESS_ALGORITHMS if a in set(runs["algorithm"])]
figure = accuracy_curves(metrics, hue="algorithm", col="dataset", hue_order=order)
cells = ours_accuracy(runs[runs["dataset"] == panels[0]], ["algorithm"]).set_index("algorithm")
final = cells["ours"].dropna().sort_values(ascending=False)
ending = ", ".join(f"{name} {value:.1f}% (n = {int(cells.loc[name, 'seeds'])})" for name, value in final.items())
leader = final.index[0] if len(final) else "none"
data_name = page.stand_in.short_name("CIFAR-10 and CIFAR-100")
rounds = int(metrics["round"].max()) if len(metrics) else 0
page.figure(figure, (f"Test accuracy against rounds at alpha = 0 with 5 clients per round on {data_name}; a method "
                     "run at several seeds (those the claims' verdicts read) is drawn as their mean with a band "
                     f"(their range). {leader} ends highest; mean of the last 100 rounds over the seeds: {ending}.")
            if len(final) else "No finished run to draw.",
            alt=f"Line chart of test accuracy in percent against communication rounds (0 to {rounds}) on "
                f"{data_name} at alpha = 0, one line per method (the mean over its seeds, with a band): {ending}.")

# %% [markdown]
# ## What we found

# %%
verdicts = page.check_claims()
lines = [f"Mean test accuracy of the last 100 rounds at the **{scale}** scale, averaged over each method's seeds: "
         f"{ending}."]
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
