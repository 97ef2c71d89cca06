"""Model registry: build a model by name for a dataset's input shape.

Every model here holds parameters only (no buffers such as BatchNorm running
statistics) and uses no in-place operations on activations, so it can be evaluated
with ``torch.func.functional_call(model, params, x)`` and vmapped over a leading
client dimension of stacked parameters (docs/design.md section 4).

Names (``MODEL_NAMES``):

- ``"cnn"``: :class:`CifarCNN`, the FedSAM/FedGloSS/FedGF CIFAR network; input
  ``[C, 32, 32]``.
- ``"resnet18gn"``: :class:`ResNet18GN`, ResNet-18 with GroupNorm(2); input
  ``[C, H, W]`` (CIFAR stem by default, see :mod:`flcore.models.resnet`).
- ``"fmnist_cnn"``: :class:`FMNISTCNN`, FedIMA's Fashion-MNIST CNN; input ``[C, 28, 28]``.
- ``"vgg11gn"``: :class:`VGG11GN`, FedIMA's VGG-11 with GroupNorm(2) and a 128-d
  projector; input ``[C, 32, 32]``.
- ``"alexnet_gn"``: :class:`AlexNetGN`, FedIMA's PACS AlexNet with GroupNorm(32) (the
  official code's head); input ``[C, H, W]`` with H, W >= 63 (224 at the paper).
- ``"mnist1d_cnn"``, ``"mnist1d_mlp"``: the MNIST-1D networks; input ``[L]``.

Input shapes exclude the batch dimension.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch import nn

from flcore.models.alexnet import ALEXNET_MIN_SIDE, AlexNetGN
from flcore.models.cnn import CIFAR_CNN_IMAGE_SIZE, CifarCNN
from flcore.models.fmnist_cnn import FMNIST_CNN_IMAGE_SIZE, FMNISTCNN
from flcore.models.mnist1d import MNIST1D_CNN_MIN_LENGTH, MNIST1DCNN, MNIST1DMLP, mnist1d_cnn_output_length
from flcore.models.resnet import ResNet18GN
from flcore.models.vgg import VGG11GN, VGG_IMAGE_SIZE

__all__ = [
    "MODEL_NAMES",
    "AlexNetGN",
    "CifarCNN",
    "FMNISTCNN",
    "MNIST1DCNN",
    "MNIST1DMLP",
    "ResNet18GN",
    "VGG11GN",
    "build_model",
    "accepts_input",
    "count_parameters",
    "default_model_for",
    "mnist1d_cnn_output_length",
]

#: The networks :func:`build_model` builds, by name.
MODEL_NAMES = ("cnn", "resnet18gn", "fmnist_cnn", "vgg11gn", "alexnet_gn", "mnist1d_cnn", "mnist1d_mlp")

_DEFAULT_MODEL_FOR_DATASET = {
    "cifar10": "cnn",
    "cifar100": "cnn",
    "fmnist": "fmnist_cnn",
    "mnist1d": "mnist1d_cnn",
    "pacs": "alexnet_gn",
    "synthetic": "mnist1d_cnn",
}


def _image_model(model_class):
    """Builder of ``model_class`` for ``[C, H, W]`` inputs (``C`` input channels)."""
    def build(shape: tuple[int, ...], num_classes: int, **kwargs: Any) -> nn.Module:
        return model_class(num_classes, in_channels=shape[0], **kwargs)
    return build


def _signal_model(model_class):
    """Builder of ``model_class`` for ``[L]`` signals (length ``L``)."""
    def build(shape: tuple[int, ...], num_classes: int, **kwargs: Any) -> nn.Module:
        return model_class(num_classes, input_len=shape[0], **kwargs)
    return build


def _is_image(shape: tuple[int, ...]) -> bool:
    return len(shape) == 3


def _is_cifar_cnn_image(shape: tuple[int, ...]) -> bool:
    return len(shape) == 3 and shape[1:] == (CIFAR_CNN_IMAGE_SIZE, CIFAR_CNN_IMAGE_SIZE)


def _is_square_image(side: int) -> Callable[[tuple[int, ...]], bool]:
    return lambda shape: len(shape) == 3 and shape[1:] == (side, side)


def _is_alexnet_image(shape: tuple[int, ...]) -> bool:
    return len(shape) == 3 and min(shape[1:]) >= ALEXNET_MIN_SIDE


def _is_signal(shape: tuple[int, ...]) -> bool:
    return len(shape) == 1


def _is_cnn_signal(shape: tuple[int, ...]) -> bool:
    return len(shape) == 1 and shape[0] >= MNIST1D_CNN_MIN_LENGTH


# name -> (builder, accepts(shape), description of accepted shapes)
_REGISTRY: dict[str, tuple[Callable[..., nn.Module], Callable[[tuple[int, ...]], bool], str]] = {
    "cnn": (_image_model(CifarCNN), _is_cifar_cnn_image, f"[C, {CIFAR_CNN_IMAGE_SIZE}, {CIFAR_CNN_IMAGE_SIZE}] images"),
    "resnet18gn": (_image_model(ResNet18GN), _is_image, "[C, H, W] images"),
    "fmnist_cnn": (_image_model(FMNISTCNN), _is_square_image(FMNIST_CNN_IMAGE_SIZE),
                   f"[C, {FMNIST_CNN_IMAGE_SIZE}, {FMNIST_CNN_IMAGE_SIZE}] images"),
    "vgg11gn": (_image_model(VGG11GN), _is_square_image(VGG_IMAGE_SIZE),
                f"[C, {VGG_IMAGE_SIZE}, {VGG_IMAGE_SIZE}] images"),
    "alexnet_gn": (_image_model(AlexNetGN), _is_alexnet_image,
                   f"[C, H, W] images with H, W >= {ALEXNET_MIN_SIDE}"),
    "mnist1d_cnn": (_signal_model(MNIST1DCNN), _is_cnn_signal, f"[L] signals with L >= {MNIST1D_CNN_MIN_LENGTH}"),
    "mnist1d_mlp": (_signal_model(MNIST1DMLP), _is_signal, "[L] signals"),
}
assert tuple(_REGISTRY) == MODEL_NAMES


def accepts_input(name: str, input_shape: Sequence[int]) -> str | None:
    """``None`` if model ``name`` takes inputs of ``input_shape``, else a description of
    the shapes it does take (for an error message)."""
    _, accepts, accepted = _REGISTRY[name]
    shape = tuple(int(d) for d in input_shape)
    return None if all(d >= 1 for d in shape) and accepts(shape) else accepted


def build_model(name: str, input_shape: Sequence[int], num_classes: int, **model_kwargs: Any) -> nn.Module:
    """Build model ``name`` for inputs of shape ``input_shape`` (no batch dimension).

    The channel count (images) or signal length (MNIST-1D) is taken from
    ``input_shape``; ``model_kwargs`` go to the model's constructor (for example
    ``stem="imagenet"`` or ``groups=...`` for ``"resnet18gn"``).

    Raises ``ValueError`` for an unknown name, a shape the model cannot take, or a
    non-positive ``num_classes``.
    """
    if name not in _REGISTRY:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODEL_NAMES)}")
    builder, accepts, accepted = _REGISTRY[name]
    shape = tuple(int(d) for d in input_shape)
    if any(d < 1 for d in shape) or not accepts(shape):
        raise ValueError(
            f"model {name!r} cannot take input shape {list(shape)}; it accepts {accepted}"
        )
    if isinstance(num_classes, bool) or int(num_classes) != num_classes or num_classes < 1:
        raise ValueError(f"num_classes must be a positive integer, got {num_classes!r}")
    return builder(shape, int(num_classes), **model_kwargs)


def default_model_for(dataset_name: str) -> str:
    """The registry name of the default model for a dataset (case-insensitive)."""
    key = dataset_name.lower()
    if key not in _DEFAULT_MODEL_FOR_DATASET:
        raise ValueError(
            f"no default model for dataset {dataset_name!r}; "
            f"known datasets: {', '.join(_DEFAULT_MODEL_FOR_DATASET)}"
        )
    return _DEFAULT_MODEL_FOR_DATASET[key]


def count_parameters(model: nn.Module) -> int:
    """Total number of scalar parameters (every parameter, trainable or not)."""
    return sum(p.numel() for p in model.parameters())
