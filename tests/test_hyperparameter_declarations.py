"""Method hyper-parameters are declared by the parts that read them, and everything the
configuration says of them is derived from the declarations (flcore.algorithms.hyperparameters)."""
from __future__ import annotations

import dataclasses

import pytest

from flcore.algorithms import METHOD_NAMES, METHODS, ServerAdaptive
from flcore.algorithms.corrections import Prox
from flcore.algorithms.hyperparameters import Hyperparameter, declare, declared, declares
from flcore.algorithms.perturbation import ASAMPerturbation, SAMPerturbation
from flcore.algorithms.server_global import FedGFServer
from flcore.config import DEFAULTS, HYPERPARAMETERS, ExperimentConfig, hyperparameters_of, resolve_config
from flcore.config.fields import ADDED_OPTIONS, OPTION_CHOICES
from flcore.errors import ConfigError


def test_the_config_keeps_protocol_fields_and_the_methods_arguments():
    names = [f.name for f in dataclasses.fields(ExperimentConfig)]
    assert len(names) <= 45 and "method_args" in names
    assert not set(names) & set(HYPERPARAMETERS)
    cfg = resolve_config(scale="smoke", method="fedsam", rho=0.3)
    assert cfg.rho == 0.3 and cfg.method_args["rho"] == 0.3 and cfg.to_dict()["rho"] == 0.3
    assert cfg.replace(rho=0.4).rho == 0.4
    with pytest.raises(AttributeError):
        cfg.not_a_field  # noqa: B018


def test_defaults_choices_and_added_options_come_from_the_declarations():
    assert {name: DEFAULTS[name] for name in HYPERPARAMETERS} == {n: hp.default for n, hp in HYPERPARAMETERS.items()}
    assert OPTION_CHOICES["fedgf_c_norm"] == ("paper", "len") and "rho" not in OPTION_CHOICES
    assert ADDED_OPTIONS == {n: hp.default for n, hp in HYPERPARAMETERS.items() if hp.added}
    assert "dyn_clip" in ADDED_OPTIONS and "rho" not in ADDED_OPTIONS


def test_a_part_carries_its_declarations_and_its_per_row_columns_follow():
    assert [hp.name for hp in ASAMPerturbation.hyperparameters] == ["rho", "eta"]
    assert SAMPerturbation.row_columns == ("rho",) and ASAMPerturbation.row_columns == ("rho", "eta")
    assert Prox.row_columns == ("mu",)
    assert FedGFServer.row_columns == () and "fedgf_window" in {hp.name for hp in FedGFServer.hyperparameters}


def test_every_declared_hyperparameter_is_read_by_some_method():
    read = {name for method in METHOD_NAMES for name in hyperparameters_of(method)}
    assert read == set(declared())


def test_a_name_declared_twice_differently_is_refused():
    again = dataclasses.replace(HYPERPARAMETERS["rho"], default=0.1)
    with pytest.raises(ValueError, match="declared twice"):
        declare(again)
    assert declare(HYPERPARAMETERS["rho"]) == (HYPERPARAMETERS["rho"],)  # the same declaration is fine


def test_a_declaration_checks_its_own_default():
    with pytest.raises(ValueError, match="not a choice"):
        Hyperparameter("x_variant", "str", "other", "a variant", choices=("paper", "code"))
    with pytest.raises(ValueError, match="kind"):
        Hyperparameter("x", "complex", 0, "a number")


def test_an_option_defaults_to_its_first_choice():
    option = Hyperparameter.option("x_variant", ("paper", "code"), "a variant", added=True)
    assert option == Hyperparameter("x_variant", "str", "paper", "a variant", choices=("paper", "code"), added=True)
    assert OPTION_CHOICES["lesam_estimate"] == ("client", "server_last_round")
    assert DEFAULTS["lesam_estimate"] == "client" and ADDED_OPTIONS["dyn_clip"] == "paper"


@pytest.mark.parametrize("name, bad, good, message", [
    ("fedwmsam_alpha", 1.0, 0.5, "must be in (0, 1)"),
    ("fedwmsam_alpha", 0.0, 0.99, "must be in (0, 1)"),
    ("fednsam_gamma", 1.0, 0.0, "must be in [0, 1)"),
    ("gma_tau", 1.5, 1.0, "must be in [0, 1]"),
    ("feddyn_alpha", 0.0, 1e-9, "must be > 0"),
    ("rho", -0.1, 0.0, "must be >= 0"),
    ("fedgf_window", 0, 1, "must be >= 1"),
    ("fedgf_window", 1_000_001, 1_000_000, "must be <= 1000000 (the documented sanity cap)"),
    ("swa_start", 4, 3, "must be <= 3 (the number of rounds; later it would never start)"),
    ("lesam_estimate", "server", "server_last_round", "allowed values: client, server_last_round"),
])
def test_the_declared_ranges_are_what_validation_enforces(name, bad, good, message):
    base = {"scale": "smoke", "rounds": 3}
    with pytest.raises(ConfigError) as caught:
        resolve_config(base, **{name: bad})
    assert caught.value.field == name and message in str(caught.value)
    assert getattr(resolve_config(base, **{name: good}), name) == good


def test_the_decorator_derives_the_row_columns_of_a_new_part(monkeypatch):
    monkeypatch.setattr("flcore.algorithms.hyperparameters._DECLARED", declared())  # the toy leaves no trace
    gamma = Hyperparameter("toy_gamma_test", "float", 0.5, "a toy coefficient", low=0, per_row=True)
    fixed = Hyperparameter("toy_kind_test", "str", "a", "a toy option", choices=("a", "b"))

    @declares(gamma, fixed)
    @dataclasses.dataclass(frozen=True)
    class ToyPart:
        toy_gamma_test: float

    assert ToyPart.row_columns == ("toy_gamma_test",)
    assert declared()["toy_kind_test"] is fixed and "toy_kind_test" not in HYPERPARAMETERS


def test_a_new_part_names_itself_and_its_state_where_it_is_written(monkeypatch):
    from flcore.algorithms import part_ids
    from flcore.algorithms.state_catalog import declared_meanings, describe_client_state

    monkeypatch.setattr(part_ids, "_NAMES", part_ids.declared_part_names())

    @part_ids.part_id("C99", "a toy correction")
    class Toy:
        client_state = {"toy_sum": "zeros"}
        state_meanings = {"toy_sum": "the toy's running sum"}

    assert Toy.part_ids == ("C99",) and part_ids.declared_part_names()["C99"] == "a toy correction"
    with pytest.raises(ValueError, match="named twice"):
        part_ids.part_id("C99", "another name")
    rows = describe_client_state(Toy.client_state, declared_meanings([Toy()]))
    assert rows == [{"name": "toy_sum", "shape": "[N, P]", "init": "zeros", "meaning": "the toy's running sum"}]
    with pytest.raises(KeyError):
        describe_client_state(Toy.client_state, {})  # a state no part explains


def test_every_state_a_method_keeps_is_explained_by_the_part_that_keeps_it():
    """Under every option choice its build reads, each client table and each server state
    entry of every method has a meaning, given by the part that keeps it; a part nested in
    another's state (the optimizer in the step, the step in IMA's window) explains its
    entries under the nested path."""
    for name in METHOD_NAMES:
        for option in hyperparameters_of(name):
            for value in OPTION_CHOICES.get(option, (None,)):
                cfg = resolve_config(scale="smoke", method=name, **({option: value} if value else {}))
                for row in (*METHODS[name].client_state(cfg), *METHODS[name].server_state(cfg)):
                    assert row["meaning"].strip(), (name, option, value, row["name"])
    rows = {row["name"]: row for row in METHODS["fedadam+ima"].server_state(resolve_config(scale="smoke",
                                                                                           method="fedadam+ima"))}
    assert rows["step.inner.opt.m"]["meaning"] == ServerAdaptive.state_meanings["m"]
    assert rows["step.window.buffer"]["shape"] == "[5, P]"
    fedfa = {row["name"]: row for row in METHODS["fedfa"].server_state(resolve_config(scale="smoke", method="fedfa"))}
    assert fedfa["fedfa.anchors"]["shape"] == "[C, d]"
