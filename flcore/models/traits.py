"""What a model, and the data it takes, can offer a claim.

A claim in a paper's ``claims.yaml`` may declare what it needs (``needs: [images]``, with the
paper's words as ``needs_reason``): a comparison whose runs train a model that lacks one of
these is *not testable here* at that scale (:func:`flcore.reproduction.claim_cells.untestable_reason`),
never decided on a stand-in that cannot speak to it.  The vocabulary:

- ``images``: two-dimensional image inputs, so image augmentations (Mixup, Cutout, crops,
  flips) mean what the papers mean by them;
- ``signals``: one-dimensional signals (MNIST-1D);
- ``convolutional``: convolutional layers;
- ``resnet``: a residual network (the papers' ResNet-18 with GroupNorm).
"""
from __future__ import annotations

#: Every trait a claim may need, with the words the pages use for it.
TRAITS: dict[str, str] = {
    "images": "two-dimensional images",
    "signals": "one-dimensional signals",
    "convolutional": "a convolutional network",
    "resnet": "a residual network (ResNet)",
}

#: The traits of each model of :data:`flcore.models.MODEL_NAMES`.
MODEL_TRAITS: dict[str, frozenset[str]] = {
    "cnn": frozenset({"images", "convolutional"}),
    "resnet18gn": frozenset({"images", "convolutional", "resnet"}),
    "fmnist_cnn": frozenset({"images", "convolutional"}),
    "vgg11gn": frozenset({"images", "convolutional"}),
    "alexnet_gn": frozenset({"images", "convolutional"}),
    "mnist1d_cnn": frozenset({"signals", "convolutional"}),
    "mnist1d_mlp": frozenset({"signals"}),
}


def model_traits(name: str) -> frozenset[str]:
    """The traits model ``name`` offers; ``ValueError`` for an unknown model."""
    if name not in MODEL_TRAITS:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODEL_TRAITS)}")
    return MODEL_TRAITS[name]


def missing_traits(needs, model: str) -> list[str]:
    """The traits of ``needs`` that model ``model`` lacks, in the order of ``needs``."""
    offered = model_traits(model)
    return [need for need in needs if need not in offered]
