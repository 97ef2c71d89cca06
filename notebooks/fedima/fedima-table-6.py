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
# # Table VI: settings of the visualization and validation experiments
#
# **What the paper says.** FedIMA's Table VI (App. E) gives the FedAvg settings behind its
# loss-landscape and validation figures: cross-device (100 clients, 10% per round) or
# cross-silo (10 clients, all per round), 5 local epochs, batch 50, lr 0.01 with momentum 0.9,
# no lr decay (0.01 in one variant of Figs. 2-4), 200 or 400 rounds, CIFAR-10 (and
# Fashion-MNIST in Fig. 10) with the CNN (and ResNet-18). The partition column was lost in
# the text conversion (two class shards per client per Secs. 4 and 5.3).
#
# **How it is made here.** The published rows are a data file transcribed from the paper
# (`flcore/papers/fedima/published/fedima-table-6.csv`). Flcore's side is what the FedAvg
# analysis runs of the figure pages use at the `paper` scale
# (`flcore.papers.fedima.analysis.vis_run`: FedIMA's protocol on CIFAR-10), so the
# table shows the settings those runs train with. One 400-round cross-silo run serves
# Figs. 8 and 9 (the paper's 200 rounds are its first half), and Fig. 10 adds runs of the
# Fashion-MNIST CNN. A data set flcore has but no run of the row's figures uses is marked *not run*.
#
# **How to rerun.** `flcore reproduce fedima-table-6` (no training; the scale changes nothing).

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
max_rounds = None  # stop every run at this round for now (a preview a rerun continues); None: all rounds

# %%
from flcore.papers.fedima.config_tables import columns_agreeing, compare_table6, table6_ours
from flcore.report.page import Page
from flcore.reproduction.published import published, source

page = Page.from_parameters("fedima-table-6", globals())

# %% [markdown]
# ## Published beside flcore

# %%
paper = published("fedima-table-6")
table = compare_table6(paper)
agree, differ = columns_agreeing(table)
ours = table6_ours(paper).iloc[0]
agree_text = f"{', '.join(agree)} agree in every row" if agree else "no column agrees in every row"
differ_text = f"; {', '.join(differ)} differ in some rows" if differ else ""
page.table(table, f"The validation experiments' settings beside what flcore's analysis runs use: {agree_text}"
                  f"{differ_text} (one {ours['rounds']}-round cross-silo run serves the figures of 200 and 400 "
                  "rounds).",
           downloads={"published": paper, "flcore": table6_ours(paper)})
page.note(f"Published values: {source('fedima-table-6')['source']}.")
