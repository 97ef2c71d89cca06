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
# # Figure 5: the clients' label distributions
#
# **What the paper shows.** FedLESAM's Fig. 5 (App. C.2) is a heat-map of the samples of
# each class held by each client, for CIFAR-10 and CIFAR-100 split among 100 and 200 clients
# by a Dirichlet distribution with coefficients 0.6 and 0.1, to show that the split "can
# generate practical and complicated data distribution". The paper gives no numbers for it.
# Its Table 2 also uses a pathological split (a few classes per client; coefficient 3 for
# CIFAR-10 in its Fig. 6).
#
# **How it is made here.** The same splits come from flcore's partition functions
# (`flcore.data.partition_dirichlet`, `flcore.data.partition.partition_shards`) applied to a
# label vector with the CIFAR training sets' class sizes (5,000 images per class for
# CIFAR-10, 500 for CIFAR-100; a partition depends on the labels only, so nothing is
# downloaded). Each client gets 50,000 / clients samples, as in FedLESAM's code. FedLESAM's
# code draws a client's class prior from Dir(a per class); flcore's `alpha` is the total
# concentration (alpha / C per class), so the paper's 0.6 and 0.1 are flcore's
# `alpha = 0.6 C` and `0.1 C` (6 and 1 for CIFAR-10, 60 and 10 for CIFAR-100). Two
# differences from the paper's code: flcore never gives an image to two clients (the code
# refills exhausted class pools, so images can repeat), and flcore's pathological split
# deals label-sorted shards (McMahan et al. 2017) where the code gives each client
# `c` random classes with a uniform prior.
#
# **How to rerun.** `flcore reproduce fedlesam-fig-5` (no training; the scale changes nothing;
# `seeds` sets the partition seed).

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
import matplotlib.pyplot as plt

from flcore.papers.fedlesam.config_tables import fig5_panels, pathological_counts, summary_table
from flcore.report.page import Page
from flcore.reproduction.published import source

page = Page.from_parameters("fedlesam-fig-5", globals())
seed = seeds[0]

# %% [markdown]
# ## Dirichlet splits (the paper's panels)

# %%
panels = fig5_panels(seed)
summary = summary_table(panels)
fig, axes = plt.subplots(2, 4, figsize=(16, 7), constrained_layout=True)
for ax, panel in zip(axes.ravel(), panels):
    image = ax.imshow(panel["counts"].T, aspect="auto", cmap="viridis", interpolation="nearest")
    ax.set_title(f"{panel['dataset']}, Dir {panel['coefficient']}, {panel['clients']} clients", fontsize=10)
    ax.set_xlabel("client")
    ax.set_ylabel("class")
    fig.colorbar(image, ax=ax, label="samples")
by = summary.set_index(["dataset", "split", "clients"])
dense, sparse = by.loc[("CIFAR-10", "Dirichlet 0.6", 100)], by.loc[("CIFAR-10", "Dirichlet 0.1", 100)]
dense100, sparse100 = by.loc[("CIFAR-100", "Dirichlet 0.6", 100)], by.loc[("CIFAR-100", "Dirichlet 0.1", 100)]
held_ratio = (by.xs("Dirichlet 0.1", level="split")["classes held (mean)"]
              / by.xs("Dirichlet 0.6", level="split")["classes held (mean)"])
page.figure(fig, f"Samples per class (rows) of every client (columns) in flcore's Dirichlet splits, seed {seed}: "
                 f"at 0.6 a CIFAR-10 client holds {dense['classes held (mean)']:.1f} of 10 classes on average, at "
                 f"0.1 only {sparse['classes held (mean)']:.1f}, with {sparse['largest class share (mean)']:.0%} "
                 f"of its samples in one class; a CIFAR-100 client holds {dense100['classes held (mean)']:.0f} of 100 "
                 f"classes at 0.6 and {sparse100['classes held (mean)']:.0f} at 0.1.",
            alt="Eight heat-maps in two rows (CIFAR-10 above, CIFAR-100 below): clients on the horizontal axis, "
                "classes on the vertical axis, colour the number of samples. The Dirichlet 0.6 panels are "
                "speckled over most classes; the Dirichlet 0.1 panels show few bright cells per column, each "
                "client holding a handful of classes; 200-client panels look like the 100-client ones with "
                "half the samples per client.")
page.table(summary, f"How skewed the Dirichlet splits are: lowering the coefficient from 0.6 to 0.1 leaves a client "
                    f"{held_ratio.min():.0%} to {held_ratio.max():.0%} of the classes it held; doubling the clients "
                    "halves each client's samples and changes the skew little.")

# %% [markdown]
# flcore serves the clients in order, each taking a fixed number of samples, so the last
# clients take what the others left: at the right edge of a panel a client can hold fewer
# classes than its prior asked for (FedLESAM's code refills exhausted classes instead, so
# its images can repeat across clients; see *Known differences*).
#
# ## Pathological split (Table 2's other strategy)

# %%
path = [{"dataset": "CIFAR-10", "split": "3 classes per client (shards)", "clients": k,
         "counts": pathological_counts("CIFAR-10", 3, k, seed)} for k in (100, 200)]
fig, axes = plt.subplots(1, 2, figsize=(10, 3.5), constrained_layout=True)
for ax, panel in zip(axes, path):
    image = ax.imshow(panel["counts"].T, aspect="auto", cmap="viridis", interpolation="nearest")
    ax.set_title(f"CIFAR-10, 3 classes per client, {panel['clients']} clients", fontsize=10)
    ax.set_xlabel("client")
    ax.set_ylabel("class")
    fig.colorbar(image, ax=ax, label="samples")
path_summary = summary_table(path)
held = path_summary["classes held (mean)"].max()
page.figure(fig, f"The pathological split with 3 classes per client (the coefficient of the paper's Fig. 6): every "
                 f"client holds {held:.1f} classes on average at most, with about a third of its samples in each.",
            alt="Two heat-maps, CIFAR-10 with 100 and 200 clients: clients on the horizontal axis, the ten classes "
                "on the vertical axis; each column has about three bright cells of equal height and is dark "
                "elsewhere.")
page.table(path_summary, "How skewed the pathological splits are: about 3 classes per client, each about a third "
                         "of its samples (a shard may straddle two classes where 5,000 images do not fill whole "
                         "shards).")
page.note(f"Published figure: {source('fedlesam-fig-5')['source']}; {source('fedlesam-fig-5')['value']}.")
