"""A small-scale sanity run per method family: MNIST-1D, alpha = 0 (one class per client),
100 clients, 5 per round, shortened to 100 rounds.  Each family learns well above chance
(0.10).  Families that do not learn in this setting are listed in the module below with
the reason, not hidden."""
import pytest

from flcore import resolve_config, run_experiment

FAMILIES = [
    "fedavg",
    "fedprox",
    "scaffold",
    "feddyn",
    "fedcm",
    "fedadam",
    "fedasam",
    "fedgamma",
    "fedsmoo",
    "fedlesam",
    "fedgf",
    "fedgloss-sam",
    "fedfa",
    "fedgma",
    "fedavg+swa",
    "fedavg+ima",
    "centralized-sgd",
]
# FedSAM: tests/test_engine.py::test_fedsam_small_scale_learns_with_one_class_per_client (150 rounds,
# tighter bounds).
# Not learning at this setting (see the book's notes): fedavgm and fedavgm+asam (server momentum
# 0.9 at server lr 1 collapses to chance, as in the FedSAM paper's Table 6), adabest (collapses
# without ASAM at lr 0.1), fedspeed (17% at 300 rounds with its default alpha/lambda).


#: The families every run of the suite checks: plain averaging, and server-side SAM with
#: its probe pass (FedSAM: tests/test_engine.py).  The others run in the extended tier
#: (``make test-extended``).
EVERY_RUN = {"fedavg", "fedgloss-sam"}


@pytest.mark.parametrize("method", [m if m in EVERY_RUN else pytest.param(m, marks=pytest.mark.extended)
                                    for m in FAMILIES])
def test_family_learns_above_chance(method):
    rounds = {"centralized-sgd": 3}.get(method, 100)
    summary = run_experiment(resolve_config(method=method, alpha=0, rounds=rounds, eval_last=20), store=None)
    assert summary["status"] == "finished"
    assert summary["best_accuracy"] > 0.2, summary
