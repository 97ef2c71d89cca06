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
# # Figure 6: accuracy per corruption on CIFAR-10-C and CIFAR-100-C (alpha = 0, severity 5)
#
# **What the paper claims.** To test whether flat minima generalize beyond the training
# distribution, the FedSAM paper evaluates its final CIFAR models (alpha = 0, 20 clients per
# round) on CIFAR-10-C and CIFAR-100-C (Hendrycks & Dietterich): the test images altered by
# 19 corruptions at 5 severities. Fig. 6 shows the accuracy per corruption at the highest
# severity for FedAvg, FedASAM and their SWA versions, which "once again validate the
# efficacy of seeking flat minima in FL". The figure has no numbers.
#
# **How it is made here.** The runs are Table 2's (`sam-main`), read from the run store; the
# SWA runs are evaluated with their SWA model, as the paper does. The evaluation is
# `flcore.analysis.robustness.corrupted_accuracy_of_runs`: every run's final model on every
# corrupted test set.
#
# - `paper`: the published CIFAR-10-C / CIFAR-100-C files (`<data_root>/CIFAR-10-C/<corruption>.npy`,
#   md5-verified; fetch them with the command the error message prints, from Zenodo records
#   2535967 and 3555552), 20 clients per round.
# - `small` / `smoke` (the stand-in): MNIST-1D, 5 clients per round (Table 2's runs; both
#   CIFAR settings are the same runs at alpha = 0, so one panel), and the MNIST-1D test signals
#   corrupted by flcore (`flcore.data.corruptions_1d`): the 15 CIFAR-C corruptions with a 1-D
#   counterpart (Gaussian, shot, impulse and speckle noise; Gaussian, defocus, glass, motion
#   and zoom blur; fog, brightness, contrast; elastic transform, pixelate, JPEG), at the
#   CIFAR-10-C severity ladders on a signal mapped to CIFAR's pixel range. Saturate, frost,
#   snow and spatter (colour and photographed overlays) have none and are left out.
#
# **How to rerun.** `flcore reproduce fedsam-fig-6 --scale small`; `--scale paper` on a GPU
# with CIFAR-10-C and CIFAR-100-C unpacked under `data_root`.

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
data_root = "data"  # CIFAR and CIFAR-C folder (paper scale)
download = True  # fetch CIFAR through torchvision when it is missing (paper scale; CIFAR-C never)
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
import matplotlib.pyplot as plt
import seaborn as sns

from flcore.papers.fedsam import results
from flcore.report.page import Page
from flcore.report.style import algorithm_palette

page = Page.from_parameters("fedsam-fig-6", globals())
order = list(results.FIG6_ALGORITHMS)
stand_in = "" if page.stand_in.is_paper else f" ({page.stand_in.name} at the {scale} scale, corrupted by flcore)"

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
results.show_evaluated_runs(page, runs)

# %% [markdown]
# ## Accuracy on the corrupted test sets
#
# Every run's final model on every corruption at every severity (the figure shows severity 5).

# %%
scores = results.corrupted_scores(runs, device=device, data_root=data_root)

# %%
if scores is not None:
    if not page.stand_in.is_paper:  # both CIFAR settings are the same MNIST-1D runs at alpha = 0
        scores["dataset"] = "MNIST-1D"
    top = scores[scores["severity"] == results.FIGURE_SEVERITY]
    table = top.pivot_table(index="corruption", columns=["dataset", "algorithm"], values="accuracy (%)")
    table = table.reindex(columns=[(d, a) for d in dict.fromkeys(top["dataset"]) for a in order
                                   if (d, a) in table.columns])
    panels = list(dict.fromkeys(top["dataset"]))
    means = top.groupby(["dataset", "algorithm"])["accuracy (%)"].mean()
    best = {d: means[d].idxmax() for d in panels}
    asam_wins = {d: int(sum("ASAM" in a for a in table[d].idxmax(axis=1))) for d in panels}
    found = "; ".join(f"{d}: {best[d]}, an ASAM variant best on {asam_wins[d]} of {len(table)} corruptions"
                      for d in panels)
    page.table(table, f"Accuracy (%) per corruption at severity 5{stand_in}; best mean over the "
                               f"corruptions: {found}.",
               downloads={"ours": top[["dataset", "algorithm", "corruption", "severity", "accuracy", "loss", "n",
                                       "run_id"]]})

# %%
if scores is not None:
    figure, axes = plt.subplots(len(panels), 1, figsize=(12, 3.8 * len(panels)), squeeze=False)
    corruptions = [c for c in table.index if c != "clean"]
    for ax, panel in zip(axes[:, 0], panels):
        data = top[(top["dataset"] == panel) & (top["corruption"] != "clean")]
        sns.barplot(data=data, x="corruption", y="accuracy (%)", hue="algorithm", hue_order=order,
                    order=corruptions, palette=algorithm_palette(order), ax=ax)
        for bar_group, label in zip(ax.containers, order):
            if "SWA" in label:
                for bar in bar_group:
                    bar.set_hatch("//")
        ax.set_title(f"{panel}-C" if page.stand_in.is_paper else f"{page.stand_in.name}, corrupted by flcore ({scale} scale)")
        ax.tick_params(axis="x", rotation=45)
        ax.set_xlabel("")
        if ax is axes[0, 0]:
            sns.move_legend(ax, "upper left", bbox_to_anchor=(1, 1))
        elif ax.get_legend() is not None:
            ax.get_legend().remove()
    figure.tight_layout()
    summary = "; ".join(f"{d}: " + ", ".join(f"{a} {means[(d, a)]:.1f}%" for a in order if (d, a) in means)
                        for d in panels)
    page.figure(figure, f"Accuracy per corruption at severity 5 with alpha = 0{stand_in}: mean over the "
                        f"corruptions {summary}.",
                alt=f"Grouped bar chart, one group per corruption ({len(corruptions)} corruptions), one bar per "
                    f"algorithm ({', '.join(order)}; SWA versions hatched), accuracy in percent at severity 5. "
                    f"Mean over the corruptions: {summary}.")

# %% [markdown]
# ## Every severity
#
# Not in the figure: the mean accuracy over the corruptions at each severity (0: the clean test set).

# %%
if scores is not None:
    by_severity = scores.groupby(["dataset", "algorithm", "severity"])["accuracy (%)"].mean().unstack("severity")
    by_severity = by_severity.reindex([(d, a) for d in panels for a in order if (d, a) in by_severity.index])
    drop = (by_severity[0] - by_severity[5]).round(1)
    page.table(by_severity, f"Mean accuracy (%) over the corruptions by severity{stand_in}; from the clean "
                                     f"set to severity 5 the accuracy drops by "
                                     + ", ".join(f"{a} {v:.1f}" for (_, a), v in drop.items()) + " points.",
               downloads={"ours": scores[["dataset", "algorithm", "corruption", "severity", "accuracy", "run_id"]]})

# %% [markdown]
# ## What we found

# %%
lines = []
if scores is not None:
    lines.append("The paper: an ASAM variant (alone or with SWA) generalizes best to the corrupted images. Ours at "
                 f"the **{scale}** scale, best mean accuracy over the corruptions at severity 5: {found}.")
else:
    lines.append("No figure: the corrupted test sets are not on this machine (see above).")
lines.append("The paper gives curves only, so no number is compared.")
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts
#
# The paper's claims that name this figure (none has numbers to check: the figure is
# bars without values).

# %%
page.show_claims()
