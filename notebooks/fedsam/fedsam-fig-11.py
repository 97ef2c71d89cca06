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
# # Figure 11: convergence with alpha = 0 and 5 clients per round
#
# **What the paper claims.** In the most heterogeneous setting (one class per client,
# 5 of 100 clients per round) the test accuracy of FedAvg oscillates and climbs slowly;
# FedSAM and above all FedASAM climb faster, and SWA on the server (dashed) both lifts and
# steadies the curves after it starts at 75% of the rounds -- "the positive gap in
# performance and the stability introduced by SWA (both if applied on FedAvg but
# especially on FedASAM)". The figure has no numbers; Table 2 has the final values.
#
# **How it is made here.** The same runs as Table 2 (alpha = 0, 5 clients per round),
# read from the run store: this page trains nothing that Table 2 has already trained.
# Test accuracy is recorded every `eval_every` rounds and at every one of the last 100.
# Each line is the mean over the seeds the claims' verdicts read, the band their range.
# At the `small` and `smoke` scales both CIFAR settings map to the same MNIST-1D runs,
# so one panel is drawn.
#
# **How to rerun.** `flcore reproduce fedsam-fig-11 --scale small`; `--scale paper` on a
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
from flcore.papers.fedsam import runs as fedsam
from flcore.report import mean_sd_text, ours_accuracy
from flcore.report.page import Page
from flcore.report.plots import accuracy_curves
from flcore.reproduction.runner import run_metrics

page = Page.from_parameters("fedsam-fig-11", globals())

# %% [markdown]
# ## The runs
#
# Pending rows are methods flcore does not implement yet: they have no curve.

# %%
runs = page.runs()  # with the seeds the verdicts read
listing = runs[["dataset", "algorithm", "seed", "status", "rounds_done", "mean_last_100", "run_id"]]
page.table(listing, f"The runs behind the curves: {int((runs['status'] == 'finished').sum())} finished of "
                    f"{len(runs)}; mean_last_100 is the mean test accuracy of the last 100 rounds (a fraction).")

# %% [markdown]
# ## Test accuracy against rounds
#
# Solid: the methods; dashed: their SWA versions (same colour).

# %%
panels = page.stand_in.distinct(fedsam.DATASETS)
metrics = run_metrics(runs[runs["dataset"].isin(panels)], store=store)
if not page.stand_in.is_paper:
    metrics["dataset"] = f"MNIST-1D ({scale} scale, standing in for CIFAR)"
figure = accuracy_curves(metrics, hue="algorithm", col="dataset", hue_order=list(fedsam.FIG11_ALGORITHMS))
cells = ours_accuracy(runs[runs["dataset"] == panels[0]], ["algorithm"]).dropna(subset=["ours"])
cells = cells.sort_values("ours", ascending=False).set_index("algorithm")
final = {name: mean_sd_text(row["ours"], row["ours_std"], row["seeds"], digits=1, status=row["status"])
         for name, row in cells.iterrows()}
leader = cells.index[0] if len(cells) else "none"
n_seeds = int(cells["seeds"].max()) if len(cells) else 0
lines_are = f"each line the mean of {n_seeds} seeds, the band their range" if n_seeds > 1 else "one seed per line"
data_name = page.stand_in.short_name("CIFAR-10 and CIFAR-100")
rounds = int(metrics["round"].max()) if len(metrics) else 0
page.figure(figure, f"Test accuracy against rounds at alpha = 0 with 5 clients per round on {data_name} ({lines_are}): "
                    f"{leader} ends highest (mean test accuracy of the last 100 rounds, %: {final[leader]})." if len(cells) else
                    "No finished run to draw.",
            alt=f"Line chart of test accuracy in percent against communication rounds (0 to {rounds}) on "
                f"{data_name} at alpha = 0, one line per method ({lines_are}); their ends in percent: "
                + ", ".join(f"{name} {value}" for name, value in final.items())
                + ". Solid lines are the methods, dashed lines their SWA versions.")

# %% [markdown]
# ## What we found

# %%
lines = [f"Mean test accuracy (%) of the last 100 rounds at the **{scale}** scale (the mean over a method's "
         "seeds, ± their sd and n where there are several): "
         + ", ".join(f"{name} {value}" for name, value in final.items()) + "."]
pending = runs.loc[runs["status"] == "pending", "algorithm"].drop_duplicates().tolist()
if pending:
    lines.append("Pending (not implemented yet): " + ", ".join(pending) + ".")
verdicts = page.check_claims()
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts
#
# The claims whose comparisons this figure's runs check (the accuracies are the ones the
# curves end with).

# %%
page.show_claims()
