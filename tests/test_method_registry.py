"""The method registry and run identity: every method reads exactly the hyper-parameters
that name its runs, the registry is built in one order and refuses a wrapper without its
base, and the run ids of stored runs do not move."""
import pytest

from flcore import resolve_config
from flcore.algorithms import METHODS
from flcore.algorithms.methods import _probe_flat
from flcore.algorithms.recipes_papers import wrapped_recipes
from flcore.config.fields import ADDED_OPTIONS, METHOD_FIELDS, NEUTRAL_DEFAULTS, OPTION_CHOICES

#: The method hyper-parameters a recipe may read: the method fields and the added options,
#: less the fields every method reads (weight decay's ``clip_norm``, ``lr_decay``...).
SCOPE = (METHOD_FIELDS | set(ADDED_OPTIONS)) - set(NEUTRAL_DEFAULTS)


class RecordingConfig:
    """A resolved config that records the name of every field read from it."""

    def __init__(self, cfg):
        object.__setattr__(self, "_cfg", cfg)
        object.__setattr__(self, "read", set())

    def __getattr__(self, name):
        self.read.add(name)
        return getattr(self._cfg, name)

    def __setattr__(self, name, value):
        raise AttributeError("a config is read-only")


def fields_read(name: str) -> set[str]:
    """The method fields ``name``'s client, server and schedule builders read, under its
    default config and under every choice of every string option (a builder may read a
    field only on one branch)."""
    read: set[str] = set()
    variants = [{}] + [{option: value} for option, values in OPTION_CHOICES.items() for value in values]
    for variant in variants:
        cfg = RecordingConfig(resolve_config(scale="smoke", method=name, **variant))
        method = METHODS[name]
        method.build_client(cfg, _probe_flat())
        method.build_server(cfg)
        method.build_schedule(cfg)
        read |= cfg.read
    return read & SCOPE


@pytest.mark.parametrize("name", list(METHODS))
def test_every_method_reads_exactly_its_hyperparameters(name):
    """The hyper-parameters of a method decide its run id; one it reads but does not list
    would let a stored run trained with another value be found again, one it lists but
    does not read would split equal runs."""
    declared = set(METHODS[name].hyperparameters)
    read = fields_read(name)
    assert read == declared, (f"{name}: read but not listed {sorted(read - declared)}, "
                              f"listed but not read {sorted(declared - read)}")


@pytest.mark.parametrize("name", list(METHODS))
def test_every_methods_gradient_count_is_that_of_its_parts(name):
    """``grad_evals_per_step`` (the cost model's unit) equals one plus the extra gradient
    evaluations its client parts carry (SAM's ascent: one)."""
    method = METHODS[name]
    client = method.build_client(resolve_config(scale="smoke", method=name), _probe_flat())
    assert client.grad_evals_per_step == method.grad_evals_per_step


def test_the_recording_config_sees_a_field_read_on_one_branch_only():
    """FedGloSS-SGD reads the warm-up fields only for the official code's server-radius
    schedule: the recording over the option choices finds them."""
    cfg = RecordingConfig(resolve_config(scale="smoke", method="fedgloss-sgd"))
    METHODS["fedgloss-sgd"].build_server(cfg)
    assert "rho_warmup_rounds" not in cfg.read
    assert {"rho_warmup_rounds", "rho_warmup_start"} <= fields_read("fedgloss-sgd")


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


@pytest.mark.parametrize("values,run_id", PINNED_RUN_IDS, ids=[str(v) for v, _ in PINNED_RUN_IDS])
def test_stored_runs_keep_their_run_ids(values, run_id):
    assert resolve_config(scale="smoke", **values).run_id() == run_id


def test_a_stored_small_scale_run_keeps_its_run_id():
    cfg = resolve_config(scale="small", method="fedsam", rho=0.05, alpha=0.5, seed=3)
    assert cfg.run_id() == "b9ec3c678e6c92e5"


def test_a_name_registered_twice_is_refused_and_the_first_stays():
    import dataclasses

    from flcore.algorithms.registry import register

    first = METHODS["fedavg"]
    with pytest.raises(ValueError, match="'fedavg' registered twice"):
        register(dataclasses.replace(first, summary="another"))
    assert METHODS["fedavg"] is first
