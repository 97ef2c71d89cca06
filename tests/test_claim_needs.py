"""What a claim needs (``needs:`` in claims.yaml) against what a run's model offers
(:mod:`flcore.models.traits`): the schema's checks, one line each; the claims about image
augmentations and about ResNet-18's protocol read *not testable here* on the MNIST-1D
stand-in with their reason, and stay testable on the paper's images and ResNet."""
from __future__ import annotations

from pathlib import Path

import pytest

from flcore.models import MODEL_NAMES
from flcore.models.traits import MODEL_TRAITS, TRAITS, missing_traits, model_traits
from flcore.reproduction import claim_registry
from flcore.reproduction.claims import cell_specs, get_claim, untestable_reason

CLAIM = """paper: fedsam
main_setting: {dataset: [cifar10, cifar100], model: cnn}
claims:
  - id: x-needs
    text: "B beats A"
    quote: "q"
    artifacts: [fedsam-table-2]
    about: {dataset: cifar10, model: cnn}
    comparisons:
      - better: {algorithm: FedAvg E=1}
        worse: {algorithm: FedSAM}
        published: {better: 2.0, worse: 1.0}
"""
AUGMENTATION = ("fedsam-augmentation-hurts-fl", "fedsam-swa-enables-augmentation",
                "fedsam-augmentation-helps-centrally")
RESNET = ("fedlesam-later-reproduction-fedsam-beats-fedlesam", "fedlesam-later-fl-simulator-fedsmoo-no-better")


def _parse(tmp_path: Path, extra: str):
    path = tmp_path / "claims.yaml"
    path.write_text(CLAIM + extra)
    return claim_registry.parse_claims(path)


def test_every_model_has_its_traits_and_images_or_signals_not_both():
    assert set(MODEL_TRAITS) == set(MODEL_NAMES)
    for name in MODEL_NAMES:
        traits = model_traits(name)
        assert traits <= set(TRAITS) and len(traits & {"images", "signals"}) == 1, name
    assert model_traits("resnet18gn") >= {"images", "resnet"} and "resnet" not in model_traits("cnn")
    assert missing_traits(["images", "resnet"], "mnist1d_cnn") == ["images", "resnet"]
    assert missing_traits(["images", "resnet"], "cnn") == ["resnet"]
    with pytest.raises(ValueError, match="unknown model 'lenet'"):
        model_traits("lenet")


def test_parse_reads_needs_and_its_reason(tmp_path):
    claim, = _parse(tmp_path, '    needs: [images, resnet, images]\n    needs_reason: "on CIFAR images"\n')
    assert claim.needs == ("images", "resnet") and claim.needs_reason == "on CIFAR images"
    bare, = _parse(tmp_path, "")
    assert bare.needs == () and bare.needs_reason == ""


@pytest.mark.parametrize("extra, expected", [
    ('    needs: [pictures]\n    needs_reason: "r"\n', "needs: unknown trait 'pictures'; choose from images, signals"),
    ("    needs: [images]\n", "needs needs its needs_reason"),
    ('    needs: images\n    needs_reason: "r"\n', "needs must be a list of traits from images"),
    ('    needs: []\n    needs_reason: "r"\n', "needs must be a list of traits"),
    ('    needs_reason: "r"\n', "needs_reason without needs"),
])
def test_a_bad_needs_is_one_line_naming_the_claim(tmp_path, extra, expected):
    with pytest.raises(ValueError) as error:
        _parse(tmp_path, extra)
    message = str(error.value)
    assert "\n" not in message and message.startswith("claims.yaml: claim x-needs: ") and expected in message


def _reason(claim_id: str, scale: str) -> list[str]:
    """Why each comparison the scale runs cannot test it (at least one runs)."""
    claim = get_claim(claim_id)
    reasons = []
    for comparison in claim.comparisons:
        cells = [cell_specs(claim, cell, scale, (0,))[0] for cell in comparison.cells_at(scale)]
        if all(cells):
            reasons.append(untestable_reason(claim, comparison, [s.resolve() for c in cells for s in c], scale))
    assert reasons, (claim_id, scale)
    return reasons


@pytest.mark.parametrize("claim_id", AUGMENTATION)
def test_image_augmentation_claims_are_not_testable_on_signals_and_testable_on_images(claim_id):
    assert get_claim(claim_id).needs == ("images",)
    for reason in _reason(claim_id, "small"):
        assert reason.startswith("needs two-dimensional images (Mixup and Cutout are image augmentations")
        assert reason.endswith("the small scale runs mnist1d with mnist1d_cnn")
    assert set(_reason(claim_id, "paper")) == {""}


@pytest.mark.parametrize("claim_id", RESNET)
def test_resnet_protocol_claims_are_not_testable_on_the_stand_in_cnn(claim_id):
    assert get_claim(claim_id).needs == ("resnet",)
    assert all(r.startswith("needs a residual network (ResNet)") for r in _reason(claim_id, "small"))
    assert set(_reason(claim_id, "paper")) == {""}


def test_a_comparison_the_scale_does_not_run_is_still_not_testable_by_the_claim_s_needs(tmp_path):
    """fedsam-swa-enables-augmentation's CIFAR-10 Mixup cells (10 clients per round) have no
    run at the small scale; the claim needs images, which the stand-in cannot offer, so that
    comparison and the claim read *not testable here*, not *not run*."""
    from flcore.reproduction.claims import evaluate

    claim = get_claim("fedsam-swa-enables-augmentation")
    unrun = [i for i, c in enumerate(claim.comparisons)
             if not all(cell_specs(claim, cell, "small", (0,))[0] for cell in c.cells_at("small"))]
    assert unrun
    result = evaluate(claim, "small", store=tmp_path / "store")
    assert result["verdict"] == "not_testable"
    assert all(c["verdict"] == "not_testable" and c["reason"].startswith("needs two-dimensional images")
               for c in result["comparisons"])
    assert result["comparisons"][unrun[0]]["reason"].endswith("the small scale runs mnist1d with mnist1d_cnn")


def test_a_comparison_names_the_stand_in_it_runs_and_the_setting_it_stands_for():
    from flcore.report.page import comparison_cells
    from flcore.reproduction.claim_compare import runs_on

    comparison = {"cells": {"better": {"dataset": "CIFAR-100", "alpha": 0.5, "algorithm": "FedASAM"},
                            "worse": {"dataset": "CIFAR-100", "alpha": 0.5, "algorithm": "FedAvg"}},
                  "runs_on": {"dataset": "mnist1d", "model": "mnist1d_cnn"}}
    assert comparison_cells(comparison) == ("MNIST-1D, alpha 0.5 (for CIFAR-100, alpha 0.5)", "FedASAM", "FedAvg")
    assert comparison_cells({**comparison, "runs_on": {"dataset": "cifar100", "model": "cnn"}})[0] == \
        "CIFAR-100, alpha 0.5"
    assert comparison_cells({**comparison, "runs_on": None})[0] == "CIFAR-100, alpha 0.5"
    fmnist = {"cells": {side: {**cell, "dataset": "FMNIST"} for side, cell in comparison["cells"].items()},
              "runs_on": {"dataset": "fmnist", "model": "fmnist_cnn"}}
    assert comparison_cells(fmnist)[0] == "FMNIST, alpha 0.5"

    class Cfg:
        def __init__(self, dataset, model):
            self.dataset, self.model = dataset, model

    assert runs_on([Cfg("mnist1d", "mnist1d_cnn")] * 2) == {"dataset": "mnist1d", "model": "mnist1d_cnn"}
    assert runs_on([Cfg("mnist1d", "mnist1d_cnn"), Cfg("cifar10", "cnn")]) is None
    assert runs_on([]) is None
