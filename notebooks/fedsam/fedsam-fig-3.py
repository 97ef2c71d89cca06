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
# # Figure 3: the global model on each client's data as rounds pass
#
# **What the paper claims.** On CIFAR-100 with FedAvg, the global model's accuracy on each
# client's local data (panels a, b) swings wildly from round to round when every client
# holds one class (alpha = 0): the model "focuses" on the classes of the last round's
# clients and forgets the others. With a homogeneous split (alpha = 1000) all clients
# see about the same accuracy. Panel c: the test accuracy for alpha in {0, 0.5, 1000};
# the alpha = 0 run needs about ten times more rounds to converge. The paper gives no
# numbers for this figure.
#
# **How it is made here.** FedAvg runs with 5 clients per round (the paper does not say
# how many) at the three alphas, the same runs as Table 2's FedAvg row, plus the alpha = 0
# run trained ten times longer (twice at the smoke scale). The engine records, every
# `eval_every` rounds, the global model's accuracy on each client's training data
# (`client_accuracy` in the run's metrics). For a run stored without that record, only
# its final model can be evaluated per client: the page then says so and shows that
# instead.
#
# **How to rerun.** `flcore reproduce fedsam-fig-3 --scale small`; `--scale paper` on a
# GPU (the long run is 200,000 rounds).

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
import matplotlib.pyplot as plt

from flcore.papers.fedsam import analysis as fedsam_analysis
from flcore.papers.fedsam import runs as fedsam
from flcore.report import mean_sd_text, ours_accuracy
from flcore.report.page import Page
from flcore.report.plots import accuracy_curves, client_accuracy_curves, client_accuracy_final
from flcore.reproduction.per_client import client_accuracy_history, final_client_accuracy
from flcore.reproduction.runner import run_metrics

page = Page.from_parameters("fedsam-fig-3", globals())
data_name = page.stand_in.data_name("CIFAR-100")

# %% [markdown]
# ## The runs
#
# Panels a and b show each client of one run (the first seed); panel c's curves are the
# mean over the seeds the claims' verdicts read, with their range as a band.

# %%
runs = page.runs()  # with the seeds the verdicts read
runs["length"] = runs["length"].fillna("normal") if "length" in runs else "normal"
listing = runs[["alpha", "length", "seed", "status", "rounds_done", "mean_last_100", "run_id"]]
page.table(listing, f"The FedAvg runs of this figure: one per alpha and seed, and the alpha = 0 run trained longer; "
                    f"{int((runs['status'] == 'finished').sum())} of {len(runs)} finished.")

# %% [markdown]
# ## (a, b) Accuracy of the global model on each client's data
#
# One line per client (at alpha = 0 a client is one class), the black line is the mean
# over clients. First seed only.

# %%
normal = runs[(runs["length"] == "normal") & (runs["seed"] == seeds[0])]
alphas = fedsam.alphas_for("CIFAR-100", scale)
panels = [alphas[0], alphas[-1]]


figure, axes = plt.subplots(1, 2, figsize=(12, 3.8), sharey=True)
fallback = []
for ax, alpha in zip(axes, panels):
    row = normal[normal["alpha"] == alpha].iloc[0]
    history = client_accuracy_history(run_metrics(normal[normal["alpha"] == alpha], store=store))
    if len(history):
        client_accuracy_curves(history, ax=ax, title=f"{data_name.split(' (')[0]}, alpha = {alpha:g}")
    else:
        fallback.append(alpha)
        client_accuracy_final(final_client_accuracy(row["run_dir"], device="cpu", data_root=data_root), ax=ax,
                              title=f"alpha = {alpha:g}: final model only (fallback)")
swings = {alpha: fedsam_analysis.client_accuracy_spread(
    client_accuracy_history(run_metrics(normal[normal["alpha"] == alpha], store=store))) for alpha in panels}
described = [f"alpha = {a:g}: a client's accuracy changes by {s[1]:.1f} points between records on average"
             for a, s in swings.items() if s is not None]
page.figure(figure, f"The global FedAvg model's accuracy on each client's data against rounds on {data_name}, "
                    f"first seed; "
                    + ("; ".join(described) if described else "per-client records missing") + ".",
            alt=f"Two line charts side by side, one line per client: the global model's accuracy (percent) on "
                f"that client's training data against rounds, for alpha = {panels[0]:g} (left) and alpha = "
                f"{panels[-1]:g} (right) on {data_name}, with the mean over clients in black. "
                + ("; ".join(described) + "." if described else ""))
if fallback:
    page.note("**Fallback.** The runs for alpha = " + ", ".join(f"{a:g}" for a in fallback)
              + " were stored without per-round client accuracy; the panels show the final model "
                "evaluated on each client instead, not the curves over rounds.")

# %% [markdown]
# ## (c) Test accuracy against rounds
#
# Left: the three alphas over the normal number of rounds. Right: the alpha = 0 run
# trained longer, on its own round axis. A line with several seeds is their mean, the band
# their range.

# %%
curves = run_metrics(runs, store=store)
curves["setting"] = [f"alpha = {a:g}" + (" (longer)" if length == "long" else "")
                     for a, length in zip(curves["alpha"], curves["length"].fillna("normal"))]
curves["panel"] = ["trained longer" if length == "long" else "normal length"
                   for length in curves["length"].fillna("normal")]
order = [f"alpha = {a:g}" for a in alphas] + [f"alpha = {alphas[0]:g} (longer)"]
figure = accuracy_curves(curves, hue="setting", col="panel", hue_order=order,
                         col_order=["normal length", "trained longer"], sharex=False,
                         title=f"FedAvg on {data_name}")
cells = ours_accuracy(runs, ["alpha", "length"]).set_index(["alpha", "length"])
final = {key: mean_sd_text(row["ours"], row["ours_std"], row["seeds"], digits=1, status=row["status"])
         for key, row in cells.iterrows()}
normal_rounds = int(curves.loc[curves["panel"] == "normal length", "round"].max())
long_rounds = int(curves.loc[curves["panel"] == "trained longer", "round"].max())
het = final.get((alphas[0], "normal"))
hom = final.get((alphas[-1], "normal"))
long_acc = final.get((alphas[0], "long"))
page.figure(figure, f"Test accuracy of FedAvg against rounds on {data_name} (a line with several seeds: their mean, "
                    f"the band their range); mean of the last 100 rounds, %: after {normal_rounds} rounds alpha = "
                    f"{alphas[0]:g} reaches {het} against {hom} at alpha = {alphas[-1]:g}; trained for "
                    f"{long_rounds} rounds it reaches {long_acc}.",
            alt=f"Two line charts of test accuracy (percent) against rounds on {data_name}. Left, over "
                f"{normal_rounds} rounds: one line per alpha ({', '.join(f'{a:g}' for a in alphas)}). Right, over "
                f"{long_rounds} rounds: the alpha = {alphas[0]:g} run trained longer, ending near {long_acc} "
                "percent.")

# %% [markdown]
# ## What we found

# %%
lines = []
for alpha in panels:
    result = swings[alpha]
    if result is not None:
        lines.append(f"alpha = {alpha:g} (first seed): clients' accuracies at the last record differ by "
                     f"{result[0]:.1f} points (standard deviation); from one record to the next a "
                     f"client's accuracy changes by {result[1]:.1f} points on average.")
lines.append("Test accuracy (%, mean of the last 100 rounds; the mean over the seeds the verdicts read, ± their sd "
             "and n where there are several): "
             + ", ".join(f"alpha = {a:g}{' longer' if n == 'long' else ''}: {v}" for (a, n), v in final.items())
             + ".")
verdicts = page.check_claims()
page.findings(lines, sep="\n\n")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
