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
# # Figure 8: accuracy on the corrupted test sets as alpha varies (severity 5)
#
# **What the paper claims.** Appendix D extends Fig. 6 to every heterogeneity level: FedAvg,
# FedSAM, FedASAM and their SWA versions (20 clients per round) evaluated on CIFAR-10-C and
# CIFAR-100-C at severity 5, against alpha. "All results tell us that ASAM (alone or combined
# with SWA) is the algorithm with the best generalization capabilities." The figure has no
# numbers.
#
# **How it is made here.** Table 2's runs (`sam-main`), each final model (the SWA model for
# the +SWA runs) evaluated on every corruption at severity 5 by
# `flcore.analysis.robustness.corrupted_accuracy_of_runs`; a point is the mean accuracy over
# the corruptions.
#
# - `paper`: the published CIFAR-10-C / CIFAR-100-C files under `data_root` (md5-verified;
#   the error message gives the fetch command), 20 clients per round.
# - `small` / `smoke`: MNIST-1D with Table 2's 5 clients per round and each CIFAR setting's
#   alphas (alpha = 0 is the same run in both panels), on the MNIST-1D test signals
#   corrupted by flcore (`flcore.data.corruptions_1d`: the 15 corruptions with a 1-D
#   counterpart; see the Figure 6 page), evaluated on a fixed random subset of 1,000 test
#   signals (the same for every run and corruption) to keep the page's 30 evaluations short.
#
# **How to rerun.** `flcore reproduce fedsam-fig-8 --scale small`; `--scale paper` on a GPU
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
from flcore.papers.fedsam import runs as fedsam
from flcore.report.page import Page
from flcore.report.style import algorithm_dashes, algorithm_palette

page = Page.from_parameters("fedsam-fig-8", globals())
order = list(results.FIG8_ALGORITHMS)


# %% [markdown]
# ## The runs

# %%
runs = page.runs()
results.show_evaluated_runs(page, runs, "{finished} finished of {total} (at alpha = 0 both settings name the "
                                            "same run below the paper scale)")

# %% [markdown]
# ## Mean accuracy over the corruptions against alpha

# %%
subset = None if page.stand_in.is_paper else results.FIG8_SUBSET  # keeps the page's own compute short on a CPU
scores = results.corrupted_scores(runs, device=device, data_root=data_root,
                                     severities=[results.FIGURE_SEVERITY], samples=subset)

# %%
if scores is not None:
    corrupted = scores[scores["corruption"] != "clean"]
    points = corrupted.groupby(["dataset", "alpha", "algorithm"])["accuracy (%)"].mean().reset_index()
    clean = scores[scores["corruption"] == "clean"].groupby(["dataset", "alpha", "algorithm"])["accuracy (%)"].mean()
    points["clean (%)"] = [clean[(d, a, m)] for d, a, m in zip(points["dataset"], points["alpha"], points["algorithm"])]
    best = points.loc[points.groupby(["dataset", "alpha"])["accuracy (%)"].idxmax()]
    asam_best = int(best["algorithm"].str.contains("ASAM").sum())
    table = points.pivot_table(index=["dataset", "alpha"], columns="algorithm", values="accuracy (%)")
    table = table[[a for a in order if a in table.columns]]
    evaluated = f" on {int(corrupted['n'].max())} test examples each"
    page.table(table, f"Mean accuracy (%) over the {corrupted['corruption'].nunique()} corruptions at "
                               f"severity 5{evaluated}; an ASAM variant is the best in {asam_best} of {len(best)} "
                               "(data set, alpha) settings.",
               downloads={"means": points, "ours": scores[["dataset", "alpha", "algorithm", "corruption", "severity",
                                                            "accuracy", "loss", "n", "run_id"]]})

# %%
if scores is not None:
    panels = list(fedsam.DATASETS)
    figure, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 3.8), squeeze=False)
    for ax, dataset in zip(axes[0], panels):
        data = points[points["dataset"] == dataset].copy()
        alphas = sorted(data["alpha"].unique())
        data["alpha "] = data["alpha"].map(lambda a: f"{a:g}")
        sns.lineplot(data=data, x="alpha ", y="accuracy (%)", hue="algorithm", hue_order=order, style="algorithm",
                     style_order=order, dashes=algorithm_dashes(order), palette=algorithm_palette(order),
                     markers=True, sort=False, ax=ax, legend=ax is axes[0][-1])
        ax.set_title(results.panel_name(page.stand_in, dataset, scale))
        ax.set_xlabel("alpha")
    if axes[0][-1].get_legend() is not None:
        sns.move_legend(axes[0][-1], "upper left", bbox_to_anchor=(1, 1))
    figure.tight_layout()
    described = "; ".join(f"{results.panel_name(page.stand_in, d, scale)} alpha {a:g}: {m} ({v:.1f}%)" for d, a, m, v in
                          best[["dataset", "alpha", "algorithm", "accuracy (%)"]].itertuples(index=False))
    page.figure(figure, f"Mean accuracy over the corruptions at severity 5 against alpha; the best per setting: "
                        f"{described}.",
                alt=f"{len(panels)} line charts, one per data set, of the mean accuracy (percent) over the corrupted "
                    f"test sets at severity 5 against alpha (categorical axis), one line per algorithm "
                    f"({', '.join(order)}; SWA versions dashed). Best per setting: {described}.")

# %% [markdown]
# ## What we found

# %%
lines = []
if scores is not None:
    lines.append(f"The paper: ASAM, alone or with SWA, generalizes best to the corrupted test sets. Ours at the "
                 f"**{scale}** scale: an ASAM variant has the best mean accuracy over the corruptions in {asam_best} "
                 f"of {len(best)} (data set, alpha) settings.")
    if not page.stand_in.is_paper:
        lines.append("Both panels run on MNIST-1D at this scale; their alpha = 0 points are the same runs.")
else:
    lines.append("No figure: the corrupted test sets are not on this machine (see above).")
lines.append("The paper gives curves only, so no number is compared.")
page.findings(lines)

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
