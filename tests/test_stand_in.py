"""The stand-in (flcore.reproduction.stand_in): which data set a scale trains for a paper's
label, how pages name it, which labels are distinct runs, what it offers a claim; papers
and notebooks ask it rather than the scale's name."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from flcore.errors import ConfigError
from flcore.reproduction import stand_in as module
from flcore.reproduction.stand_in import paper_dataset, register_stand_in, stand_in_for

ROOT = Path(__file__).resolve().parents[1]


def test_the_paper_scale_trains_each_label_and_the_others_their_stand_in():
    paper, small = stand_in_for("paper"), stand_in_for("small")
    assert paper.is_paper and paper.dataset_for("CIFAR-100") == "cifar100" and paper.dataset_for("FMNIST") == "fmnist"
    assert not small.is_paper and {small.dataset_for(label) for label in ("CIFAR-10", "CIFAR-100")} == {"mnist1d"}
    assert small.model == "mnist1d_cnn" and small.offers() == {"signals", "convolutional"}
    assert "images" in paper.offers() and "resnet" in paper.offers()
    assert paper.data_name("CIFAR-100") == "CIFAR-100" and paper.ours() == ""
    assert small.data_name("CIFAR-100") == "MNIST-1D (small scale, standing in for CIFAR-100)"
    assert small.short_name("CIFAR-100") == "MNIST-1D (small scale)"
    assert small.ours() == " (ours: MNIST-1D at the small scale)"
    assert paper.distinct(("CIFAR-100", "CIFAR-10")) == ["CIFAR-100", "CIFAR-10"]
    assert small.distinct(("CIFAR-100", "CIFAR-10")) == ["CIFAR-100"]  # one stand-in: the same runs


def test_a_paper_may_name_another_stand_in_and_bad_ones_are_refused(monkeypatch):
    monkeypatch.setattr(module, "_PAPER_STAND_INS", {})
    register_stand_in("toy", "smoke", "fmnist")
    assert stand_in_for("smoke", "toy").dataset == "fmnist" and stand_in_for("smoke", "toy").model == "fmnist_cnn"
    assert stand_in_for("smoke", "fedsam").dataset == "mnist1d" and stand_in_for("small", "toy").dataset == "mnist1d"
    assert stand_in_for("smoke", "toy").data_name("CIFAR-10") == "Fashion-MNIST (smoke scale, standing in for CIFAR-10)"
    with pytest.raises(ValueError, match="a stand-in is for smoke, small"):
        register_stand_in("toy", "paper", "fmnist")
    with pytest.raises(ConfigError, match="dataset"):
        register_stand_in("toy", "small", "imagenet")  # no preset at that scale
    with pytest.raises(ValueError, match="scale: one of"):
        stand_in_for("huge")
    with pytest.raises(ValueError, match="not a data set of the papers"):
        paper_dataset("ImageNet")


def test_papers_and_notebooks_ask_the_stand_in_not_the_scales_name():
    found = [f"{path.relative_to(ROOT)}:{number}"
             for folder in ("flcore/papers", "notebooks") for path in sorted((ROOT / folder).rglob("*.py"))
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r'scale [!=]= "paper"', line)]
    assert not found, found
