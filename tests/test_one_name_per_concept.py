"""One definition per concept in flcore: a second body of the same name is how two
behaviours drift apart (two device resolutions with different errors, two group trainers,
two accuracy curves, CIFAR-10's class names written twice)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "flcore"


def _definitions(pattern: str) -> list[str]:
    return [f"{path.relative_to(PACKAGE.parent)}:{number}" for path in sorted(PACKAGE.rglob("*.py"))
            for number, line in enumerate(path.read_text().splitlines(), 1) if re.search(pattern, line)]


@pytest.mark.parametrize("name", ["train_group", "resolve_device", "accuracy_curve", "paper_dataset",
                                  "stand_in_for", "remove_unrecorded", "never_reached"])
def test_one_function_of_each_name(name):
    found = _definitions(rf"^\s*def _?{name}\(")
    assert len(found) == 1, found


def test_cifar10s_class_names_are_written_once():
    found = _definitions(r'"airplane", "automobile"')
    assert len(found) == 1, found


def test_a_device_flcore_cannot_use_is_one_config_error():
    import torch

    from flcore.devices import resolve_device
    from flcore.errors import ConfigError

    assert resolve_device("cpu") == torch.device("cpu") and resolve_device(torch.device("cpu")).type == "cpu"
    with pytest.raises(ConfigError, match="'device'.*allowed values"):
        resolve_device("toaster")
    if not torch.cuda.is_available():
        assert resolve_device("auto").type == "cpu"
        with pytest.raises(ConfigError, match="CUDA is not available here"):
            resolve_device("cuda:0")
