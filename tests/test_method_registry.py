"""The method registry and run identity: a method's hyper-parameters are what its build
reads, the registry is built in one order and refuses a wrapper without its base, and the
run ids of stored runs do not move."""
import dataclasses

import pytest

from flcore import resolve_config
from flcore.algorithms import METHODS
from flcore.algorithms.methods import parts_of_built, probe_flat
from flcore.algorithms.recipes_papers import wrapped_recipes
from flcore.config import parts_of, traffic_of
from flcore.config.fields import OPTION_CHOICES
from flcore.config.method_reads import (
    METHOD_SCOPE,
    RecordingConfig,
    fields_read_by_build,
    grad_evals_per_step,
    hyperparameters_of,
)


def fields_read_everywhere(name: str) -> set[str]:
    """The method fields ``name``'s build reads under its defaults and under every choice of
    every string option, whether the build reads that option or not."""
    read = fields_read_by_build(name)
    for option, values in OPTION_CHOICES.items():
        for value in values:
            read |= fields_read_by_build(name, {option: value})
    return read & METHOD_SCOPE


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_reads_exactly_its_hyperparameters(name):
    """The hyper-parameters of a method decide its run id; one it reads but does not list
    would let a stored run trained with another value be found again, one it lists but
    does not read would split equal runs.  They are recorded from the build following only
    the options it reads: building under every option choice finds no other field."""
    read = fields_read_everywhere(name)
    listed = set(hyperparameters_of(name))
    assert read == listed, (f"{name}: read but not listed {sorted(read - listed)}, "
                            f"listed but not read {sorted(listed - read)}")


@pytest.mark.parametrize("name", list(METHODS))
def test_every_methods_gradient_count_is_one_number(name):
    """``grad_evals_per_step`` (the cost model's unit) is the built client's one plus the
    extra evaluations of its parts, and no option choice changes it: the planner prices a
    method by its name."""
    counts = {method_client_evals(name, {option: value})
              for option, values in OPTION_CHOICES.items() for value in values}
    assert counts == {grad_evals_per_step(name)}


def method_client_evals(name: str, options: dict) -> int:
    client = METHODS[name].build_client(resolve_config(scale="smoke", method=name, **options), probe_flat())
    return 1 + sum(part.extra_grad_evals for part in client.parts if hasattr(part, "extra_grad_evals"))


def test_the_gradient_count_is_that_of_the_perturbation():
    """SAM-type ascents cost one more gradient per step; SAM~ reuses the last one."""
    expected = {"fedavg": 1, "fedsam": 2, "fedasam": 2, "feddyn+sam": 2, "fedsmoo": 2, "fedgf": 2,
                "fedlesam": 1, "centralized-samtilde": 1, "fedgloss-sgd": 1, "fedgloss-sam": 2,
                "scaffold+asam+swa": 2, "fednsam": 2, "fedswa": 1}
    assert {name: grad_evals_per_step(name) for name in expected} == expected


def test_parts_are_read_off_the_built_parts_family_by_family():
    """Ids carried by the built parts, P, C, S, A, L in turn: the server step names its
    optimizer (S2 momentum, S3 adaptive, else S0), C0 when nothing corrects the gradient,
    a wrapper's schedule before the base schedule it wraps."""
    assert parts_of("fedavg") == ("P0", "C0", "S0", "L0")
    assert parts_of("fedavgm") == ("P0", "C0", "S2", "L0")
    assert parts_of("fedyogi+ima") == ("P0", "C0", "S3", "A2", "L3")
    assert parts_of("scaffold+asam+swa") == ("P2", "C2", "S0", "A1", "L1", "L0")
    assert parts_of("fedgloss-sam") == ("P1", "P6", "C3", "S0", "S8", "S6", "L0")
    assert parts_of("fedmoswa") == ("P0", "C8", "S0", "S10", "L4", "L0")
    assert parts_of("fedlesam") == ("P4", "C0", "S0", "L2")


def test_parts_follow_the_recipe_defaults():
    """FedOpt with server SGD builds S0; the same recipe under FedAvgM's momentum builds S2."""
    fedopt = METHODS["fedopt"]
    assert parts_of("fedopt")[2] == "S0"
    with_momentum = dataclasses.replace(fedopt, name="fedopt-momentum", defaults={"server_momentum": 0.9})
    cfg = resolve_config(scale="smoke", method="fedopt", server_momentum=0.9)
    built = parts_of_built(with_momentum.build_client(cfg, probe_flat()), with_momentum.build_server(cfg))
    assert built == ("P0", "C0", "S2")


def test_traffic_counts_the_vectors_parts_declare():
    """One model each way, plus each distinct model-sized vector a part declares, plus a
    probe exchange each way (docs/algorithms.md 7.2's comm column)."""
    assert traffic_of("fedavg") == (1, 1)
    assert traffic_of("scaffold") == (2, 2)  # c down, c_k+ - c_k up
    assert traffic_of("fedcm") == (2, 1)  # the momentum down; its step count is a scalar
    assert traffic_of("naivefedgloss") == (2, 2)  # the probe exchange
    assert traffic_of("fedwmsam") == (3, 2)  # SCAFFOLD's c and the momentum down, dc up


def test_the_recording_config_sees_a_field_read_on_one_branch_only():
    """FedGloSS-SGD reads the warm-up fields only for the official code's server-radius
    schedule: following the options its build reads finds them."""
    cfg = RecordingConfig(resolve_config(scale="smoke", method="fedgloss-sgd"))
    METHODS["fedgloss-sgd"].build_server(cfg)
    assert "rho_warmup_rounds" not in cfg.read and "gloss_server_rho_schedule" in cfg.read
    assert {"rho_warmup_rounds", "rho_warmup_start"} <= set(hyperparameters_of("fedgloss-sgd"))


def test_the_recording_config_is_read_only():
    cfg = RecordingConfig(resolve_config(scale="smoke"))
    with pytest.raises(AttributeError, match="read-only"):
        cfg.rho = 0.1


def test_hyperparameters_are_listed_in_the_configs_field_order():
    assert hyperparameters_of("fedasam") == ("rho", "eta")
    assert hyperparameters_of("fedavg") == ()
    assert hyperparameters_of("fedsam+swa")[:1] == ("rho",)


def test_a_wrapper_without_its_base_is_refused():
    bases = {name: method for name, method in METHODS.items() if name != "fedprox+asam"}
    with pytest.raises(ValueError, match="'fedprox\\+asam' of a \\+swa/\\+swalr/\\+ima wrapper is not registered"):
        wrapped_recipes(bases)


def test_the_registry_registers_the_wrappers_after_their_bases():
    names = list(METHODS)
    for name in names:
        for suffix in ("+swa", "+swalr", "+ima"):
            if name.endswith(suffix):
                assert names.index(name.removesuffix(suffix)) < names.index(name)
    assert names[:3] == ["fedavg", "fedopt", "fedavgm"]


#: Run ids of stored runs, computed before the recipes were reorganised: a change to
#: a recipe, a field or the canonical config must leave them as they are.
PINNED_RUN_IDS = [
    ({"method": "fedavg"}, "1c641f182e4cdf14"),
    ({"method": "fedsam"}, "6f542fbe6e8391b7"),
    ({"method": "fedasam"}, "d814a7770bcee9b8"),
    ({"method": "scaffold"}, "874f8e14ea0fc3f5"),
    ({"method": "feddyn+asam"}, "3207f1e1f8c27931"),
    ({"method": "scaffold+asam", "rho": 0.5, "eta": 0.1}, "11fd433ec1caa2ea"),
    ({"method": "fedsmoo"}, "0ce78f10534b474a"),
    ({"method": "fedspeed"}, "0d09eee2ae5b3120"),
    ({"method": "fedspeed", "fedspeed_variant": "code"}, "ae9860a59694b138"),
    ({"method": "fedgloss-sam"}, "642ed104b9e46ec4"),
    ({"method": "fedgloss-sgd", "gloss_server_rho_schedule": "code"}, "06adbc1bf82524ce"),
    ({"method": "fedgf"}, "1b256d99d858c2f0"),
    ({"method": "fedgf-static-c"}, "98b4115b6789e6a1"),
    ({"method": "fedgf-static-c", "fedgf_static_c": 0.25}, "4b6d96e55897213c"),
    ({"method": "fedlesam"}, "5b93956a743b02e8"),
    ({"method": "fedsam+swa"}, "bcb3721ad4fb88d0"),
    ({"method": "centralized-swa"}, "fad6d9941e74aa0b"),
    ({"method": "fedavg+ima"}, "3e2df16a2c55e5cd"),
]

#: Run ids of every other method family, computed while each recipe still listed its
#: hyper-parameters by hand: recording them from the build must not move a run.
PINNED_FAMILY_RUN_IDS = [
    ({"method": "fedprox+asam"}, "aaf95e2496caf5a6"),
    ({"method": "adabest"}, "b63dab8df4edf887"),
    ({"method": "fedgamma"}, "1d844864f1dfd232"),
    ({"method": "fedcm"}, "e391f133d71a3930"),
    ({"method": "mofedsam"}, "5ad68f36b965f7f8"),
    ({"method": "fednova"}, "46d4c0f69dcb2aa1"),
    ({"method": "fedgma"}, "99ad0191a62db023"),
    ({"method": "fedfa"}, "3e462ba095c0fbcc"),
    ({"method": "fedadam"}, "3eb83bc5f0054dfd"),
    ({"method": "fedsmoo-noreg"}, "37585bf6b2e8f75d"),
    ({"method": "fedgloss-sgd-noadmm"}, "0a26731ace2a061d"),
    ({"method": "naivefedgloss"}, "a2ccd8d36ab8e152"),
    ({"method": "fedlesam-s"}, "8b99b1f34cb965d2"),
    ({"method": "fedlesam-d"}, "6961d664af1ec9e0"),
    ({"method": "fedlesam", "lesam_estimate": "server_last_round"}, "43810a0c506e7d41"),
    ({"method": "fedgf", "fedgf_c_norm": "len"}, "1b3a304a22504d9e"),
    ({"method": "fedsam+swalr"}, "ad74ee0fa84613da"),
    ({"method": "fedasam+ima"}, "c61b973fcf9a3748"),
    ({"method": "fedavg+ima", "ima_exploration": "cyclic"}, "0785313e5cd12c17"),
    ({"method": "centralized-samtilde"}, "f0f59aa5b5720a15"),
    ({"method": "wima"}, "87e34438d5d1d382"),
    ({"method": "fedswa"}, "312d6fd09156e0b7"),
    ({"method": "fedswa", "fedswa_variant": "code"}, "479c73b064e61c59"),
    ({"method": "fedmoswa"}, "19ed2c7e65a4d87f"),
    ({"method": "fednsam"}, "681559f0e9f4ec8a"),
]


@pytest.mark.parametrize("values,run_id", PINNED_RUN_IDS, ids=[str(v) for v, _ in PINNED_RUN_IDS])
def test_stored_runs_keep_their_run_ids(values, run_id):
    assert resolve_config(scale="smoke", **values).run_id() == run_id


@pytest.mark.parametrize("values,run_id", PINNED_FAMILY_RUN_IDS, ids=[str(v) for v, _ in PINNED_FAMILY_RUN_IDS])
def test_every_method_family_keeps_its_run_ids(values, run_id):
    assert resolve_config(scale="smoke", **values).run_id() == run_id


def test_a_stored_small_scale_run_keeps_its_run_id():
    """Pinned since the small scale evaluates every fifth of its last 100 rounds
    (``eval_last_every: 5``); its runs stored before then had id b9ec3c678e6c92e5, which the
    same config with every round evaluated keeps."""
    cfg = resolve_config(scale="small", method="fedsam", rho=0.05, alpha=0.5, seed=3)
    assert cfg.run_id() == "08c327480786691c"
    assert cfg.replace(eval_last_every=1).run_id() == "b9ec3c678e6c92e5"


def test_a_name_registered_twice_is_refused_and_the_first_stays():
    import dataclasses

    from flcore.algorithms.registry import register

    first = METHODS["fedavg"]
    with pytest.raises(ValueError, match="'fedavg' registered twice"):
        register(dataclasses.replace(first, summary="another"))
    assert METHODS["fedavg"] is first


def test_the_pooled_recipes_are_the_centralized_baselines_and_train_one_client():
    """A recipe says it trains one client on the pooled data (``pooled``); its wrappers keep
    it, and the config gives it the centralized protocol whatever the scale."""
    assert {name for name, method in METHODS.items() if method.pooled} == {
        "centralized-sgd", "centralized-sam", "centralized-asam", "centralized-samtilde", "centralized-swa",
        "centralized-sam+swa", "centralized-asam+swa"}
    cfg = resolve_config(scale="small", method="centralized-sam+swa")
    assert (cfg.clients, cfg.per_round, cfg.partition) == (1, 1, "iid")
    assert resolve_config(scale="small", method="fedsam").clients == 100
