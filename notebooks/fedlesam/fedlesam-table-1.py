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
# # Table 1: summary of the SAM-based federated methods
#
# **What the paper says.** FedLESAM's Table 1 places each SAM-based method by its base
# federated algorithm, the sharpness it minimizes, whether the client computes a local
# perturbation and whether it costs extra computation. The text conversion lost the table's
# check marks; App. A says that FedSAM, MoFedSAM and FedGAMMA "calculate local perturbations",
# that FedSMOO "still need[s] to calculate the local perturbations", that "all above
# algorithms introduce extra computational burden", and that FedLESAM estimates the global
# perturbation "without extra computation".
#
# **How it is made here.** The published table is a data file transcribed from the paper
# (`flcore/papers/fedlesam/published/fedlesam-table-1.csv`; the lost marks are empty cells with a
# note). Flcore's side is read from each method's recipe: the base algorithm from its
# correction part (C0 FedAvg, C5 FedCM's momentum, C2 SCAFFOLD, C3 FedDyn), the target from
# its perturbation part (P1 SAM and P3 FedSMOO's corrected SAM perturb along the client's
# gradient: local sharpness; P4 FedLESAM along the estimated global update: global
# sharpness), *local perturbation* from whether the perturbation uses a local gradient, and
# *extra computation* from `grad_evals_per_step > 1`. The FedLESAM row covers `fedlesam`,
# `fedlesam-s` and `fedlesam-d`.
#
# **How to rerun.** `flcore reproduce fedlesam-table-1` (no training; the scale changes nothing).

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
from flcore.papers.fedlesam.method_costs import SUMMARY_METHODS, TABLE1_FROM_APPENDIX_A, summary_ours
from flcore.report import compare_settings
from flcore.report.page import Page
from flcore.reproduction.method_costs import methods_behind
from flcore.reproduction.published import published, source

page = Page.from_parameters("fedlesam-table-1", globals())

# %% [markdown]
# ## Published beside flcore
#
# The columns the text kept are compared; the two whose check marks were lost show
# flcore's value beside what App. A says in words.

# %%
paper = published("fedlesam-table-1")
ours = summary_ours(list(paper["algorithm"]))
kept = paper[["algorithm", "base_algorithm", "minimizing_target", "note"]]
table = compare_settings(kept, ours[["algorithm", "base_algorithm", "minimizing_target"]], ["algorithm"])
APPENDIX_A = TABLE1_FROM_APPENDIX_A  # App. A's words, quoted above
table["local perturbation (App. A text)"] = [APPENDIX_A[a][0] for a in table["algorithm"]]
table["local perturbation (flcore)"] = ours["local_perturbation"].values
table["extra computation (App. A text)"] = [APPENDIX_A[a][1] for a in table["algorithm"]]
table["extra computation (flcore)"] = ours["extra_computation"].values
agree = (table["match"] == "yes").sum()
marks = ((table["local perturbation (App. A text)"] == table["local perturbation (flcore)"])
         & (table["extra computation (App. A text)"] == table["extra computation (flcore)"])).sum()
page.table(table, f"The SAM-based methods' base algorithm and target, the paper's beside flcore's parts: {agree} of "
                  f"{len(table)} rows agree; the lost check marks, read from App. A's words, agree for {marks} of "
                  f"{len(table)}: only FedLESAM perturbs without a local gradient and without a second one.",
           downloads={"published": paper, "flcore": ours})

# %% [markdown]
# ## Where flcore's values come from

# %%
evidence = methods_behind(list(SUMMARY_METHODS), SUMMARY_METHODS)
page.table(evidence, "The flcore methods behind each row: the FedLESAM row's three variants share the P4 "
                     "perturbation and one gradient evaluation per step; the others evaluate two.")
page.note(f"Published values: {source('fedlesam-table-1')['source']}.")
