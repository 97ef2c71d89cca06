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
# # Figure 12: test error around three local models at alpha = 0.5
#
# **What the paper says.** Appendix Figure 12 of the FedSAM paper draws the CIFAR-100 test
# error on the plane through "three distinct local models trained with alpha = 0.5 for 20k
# rounds" (FedAvg, presumably): the intermediate heterogeneity level of Figure 2 (c, d),
# where at alpha = 0 the clients' models sit in high-error regions and at alpha = 1k in a
# connected low-error one. The figure has no numbers.
#
# **How it is made here.** FedAvg with the CIFAR-100 protocol (5 clients per round)
# trained as *recorded* runs, which save the last round's global model and the round's
# client models after local training; the plane goes through the first three of that
# round's five clients (the paper does not say which clients). Planes after Garipov et al.
# (the paper's App. C.3): 21 x 21 points at the `paper` scale (fewer below) over the
# models' extent plus a 20% margin. The test error is measured on the test set (a subset
# below `paper`). Below the `paper` scale MNIST-1D stands in for CIFAR-100.
#
# **How to rerun.** `flcore reproduce fedsam-fig-12 --scale small`; `--scale paper` on a
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
from flcore.papers.fedsam import analysis as fedsam_analysis
from flcore.report.page import Page

page = Page.from_parameters("fedsam-fig-12", globals())
field = "error"  # what the panels show: "loss" (train loss) or "error" (test error)

# %% [markdown]
# ## The runs

# %%
runs = page.runs()
page.table(runs[["algorithm", "alpha", "record", "status", "run_id"]],
           f"The recorded FedAvg run of the figure: {int((runs['status'] == 'finished').sum())} of {len(runs)} "
           "finished.")

# %% [markdown]
# ## The planes
#
# Triangles: the three clients' models after the last round's local training; white
# cross: their average.

# %%
values = fedsam_analysis.show_client_planes(page, runs, scale, field, device=page.analysis_device,
                                            data_root=data_root)

# %% [markdown]
# ## What we found

# %%
page.findings(fedsam_analysis.client_plane_findings(values, field), empty="No finished runs to draw.")

# %% [markdown]
# ## The paper's claims: verdicts

# %%
page.show_claims()
