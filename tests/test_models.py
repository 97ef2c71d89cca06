"""Tests for flcore.models: the papers' exact architectures and functional use."""
from __future__ import annotations

import pytest
import torch
from torch.func import functional_call, stack_module_state, vmap

from flcore.models import (
    FMNISTCNN,
    MNIST1DCNN,
    MNIST1DMLP,
    MODEL_NAMES,
    VGG11GN,
    AlexNetGN,
    CifarCNN,
    ResNet18GN,
    build_model,
    count_parameters,
    default_model_for,
)

IMAGE_SHAPE = (3, 32, 32)
SIGNAL_SHAPE = (40,)
INPUT_SHAPES = {
    "cnn": IMAGE_SHAPE,
    "resnet18gn": IMAGE_SHAPE,
    "fmnist_cnn": (1, 28, 28),
    "vgg11gn": IMAGE_SHAPE,
    "alexnet_gn": (3, 63, 63),  # the smallest side it takes (224 at the paper)
    "mnist1d_cnn": SIGNAL_SHAPE,
    "mnist1d_mlp": SIGNAL_SHAPE,
}
FEATURE_DIMS = {"cnn": 192, "resnet18gn": 512, "fmnist_cnn": 128, "vgg11gn": 128, "alexnet_gn": 512, "mnist1d_cnn": 128,
                "mnist1d_mlp": 100}
# Models cheap enough for the vmap test on 2 CPU cores.
VMAPPED_MODELS = ("cnn", "fmnist_cnn", "vgg11gn", "alexnet_gn", "mnist1d_cnn", "mnist1d_mlp")


def _model(name: str, num_classes: int = 10, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return build_model(name, INPUT_SHAPES[name], num_classes)


def _inputs(name: str, batch: int, seed: int = 1) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(batch, *INPUT_SHAPES[name], generator=gen)


def _conv(c_in, c_out, k):
    return c_in * c_out * k * k + c_out


def _fc(n_in, n_out):
    return n_in * n_out + n_out


@pytest.mark.parametrize("num_classes", [10, 7])
def test_fmnist_cnn_has_fedimas_layers(num_classes):
    # Table IV / official code: Conv(1,32,5), Conv(32,32,5), 28 -> 24 -> 12 -> 8 -> 4,
    # FC(32*4*4, 384), FC(384, 128), FC(128, C)
    expected = _conv(1, 32, 5) + _conv(32, 32, 5) + _fc(32 * 4 * 4, 384) + _fc(384, 128) + _fc(128, num_classes)
    assert count_parameters(FMNISTCNN(num_classes)) == expected
    assert num_classes != 10 or expected == 274_026


@pytest.mark.parametrize("num_classes", [10, 100])
def test_vgg11gn_has_vgg11_convolutions_groupnorm_and_the_projector(num_classes):
    widths = [3, 64, 128, 256, 256, 512, 512, 512, 512]
    convs = sum(_conv(a, b, 3) for a, b in zip(widths, widths[1:]))
    norms = sum(2 * w for w in widths[1:])  # GroupNorm: one weight and one bias per channel
    expected = convs + norms + _fc(512, 128) + _fc(128, num_classes)
    model = VGG11GN(num_classes)
    assert count_parameters(model) == expected
    assert {m.num_groups for m in model.modules() if isinstance(m, torch.nn.GroupNorm)} == {2}
    assert len(model.convs) == 8 and sum(model._pool_after) == 5


@pytest.mark.parametrize("num_classes", [7, 10])
def test_alexnet_gn_has_the_codes_layers(num_classes):
    # official code: AlexNet convs (64,11,s4 / 192,5 / 384,3 / 256,3 / 256,3) + GroupNorm(32),
    # AdaptiveAvgPool(6,6), FC(9216,1024), FC(1024,512), FC(512,C)
    widths = [3, 64, 192, 384, 256, 256]
    kernels = [11, 5, 3, 3, 3]
    convs = sum(_conv(a, b, k) for a, b, k in zip(widths, widths[1:], kernels))
    norms = sum(2 * w for w in widths[1:])
    expected = convs + norms + _fc(256 * 6 * 6, 1024) + _fc(1024, 512) + _fc(512, num_classes)
    model = AlexNetGN(num_classes)
    assert count_parameters(model) == expected
    assert num_classes != 7 or expected == 12_438_599
    assert {m.num_groups for m in model.modules() if isinstance(m, torch.nn.GroupNorm)} == {32}


def test_alexnet_gn_takes_paper_size_images_and_refuses_too_small_ones():
    torch.manual_seed(0)
    model = build_model("alexnet_gn", (3, 224, 224), 7)
    shapes = []
    model.convs[-1].register_forward_hook(lambda module, args, out: shapes.append(out.shape))
    with torch.no_grad():
        out = model(torch.randn(2, 3, 224, 224))
    assert out.shape == (2, 7) and shapes == [(2, 256, 13, 13)]  # torchvision AlexNet's map at 224
    with pytest.raises(ValueError, match="H, W >= 63"):
        build_model("alexnet_gn", (3, 62, 62), 7)


def test_vgg11gn_projector_is_linear_unless_asked():
    torch.manual_seed(0)
    linear = VGG11GN(10)
    relu = VGG11GN(10, projector_relu=True)
    relu.load_state_dict(linear.state_dict())
    x = torch.randn(3, 3, 32, 32)
    with torch.no_grad():
        plain = linear.features(x)
        assert (plain < 0).any()  # a linear projector keeps negative outputs
        torch.testing.assert_close(relu.features(x), plain.clamp(min=0))


@pytest.mark.parametrize("num_classes, expected", [(10, 797_962), (100, 815_332)])
def test_cifar_cnn_has_the_papers_parameter_count(num_classes, expected):
    assert count_parameters(CifarCNN(num_classes)) == expected


@pytest.mark.parametrize("num_classes, expected", [(10, 11_181_642), (100, 11_227_812)])
def test_resnet_imagenet_stem_matches_fedlesam_parameter_count(num_classes, expected):
    # FedLESAM's torchvision resnet18 with GroupNorm(2): counts from its issue #1.
    assert count_parameters(ResNet18GN(num_classes, stem="imagenet")) == expected


def test_resnet_cifar_stem_replaces_only_the_first_convolution():
    cifar, imagenet = ResNet18GN(10), ResNet18GN(10, stem="imagenet")
    # 7x7 vs 3x3 stem convolution from 3 to 64 channels, no bias.
    assert count_parameters(imagenet) - count_parameters(cifar) == 64 * 3 * (49 - 9)
    assert not any(m.bias is not None for m in cifar.modules() if isinstance(m, torch.nn.Conv2d))
    norms = [m for m in cifar.modules() if isinstance(m, torch.nn.GroupNorm)]
    assert len(norms) == 1 + 8 * 2 + 3  # stem, two per block, three projection shortcuts
    assert all(m.num_groups == 2 for m in norms)


@pytest.mark.parametrize("stem, final_map", [("cifar", 4), ("imagenet", 1)])
def test_resnet_downsamples_32x32_inputs_by_the_stem_and_three_stages(stem, final_map):
    model = ResNet18GN(10, stem=stem)
    shapes = []
    model.layer4.register_forward_hook(lambda module, args, out: shapes.append(out.shape))
    with torch.no_grad():
        model(torch.randn(1, 3, 32, 32))
    assert shapes == [(1, 512, final_map, final_map)]


def test_cifar_cnn_keeps_the_reference_layer_names():
    names = {name.split(".")[0] for name, _ in CifarCNN(10).named_parameters()}
    assert names == {"conv1", "conv2", "fc1", "fc2", "fc3"}


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_output_and_feature_shapes(name):
    model = _model(name, num_classes=7)
    x = _inputs(name, batch=2)
    with torch.no_grad():
        assert model(x).shape == (2, 7)
        assert model.features(x).shape == (2, FEATURE_DIMS[name])


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_models_hold_parameters_only(name):
    model = _model(name)
    assert list(model.buffers()) == []
    assert set(model.state_dict()) == {n for n, _ in model.named_parameters()}


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_functional_call_with_own_parameters_equals_forward(name):
    model = _model(name)
    x = _inputs(name, batch=1)
    params = dict(model.named_parameters())
    with torch.no_grad():
        torch.testing.assert_close(functional_call(model, params, (x,)), model(x))


@pytest.mark.parametrize("name", VMAPPED_MODELS)
def test_vmap_over_clients_equals_separate_calls(name):
    clients = [_model(name, seed=seed) for seed in range(3)]
    params, _ = stack_module_state(clients)
    x = torch.stack([_inputs(name, batch=4, seed=10 + k) for k in range(3)])
    base = clients[0]

    def forward(p, xb):
        return functional_call(base, p, (xb,))

    with torch.no_grad():
        batched = vmap(forward)(params, x)
        separate = torch.stack(
            [forward(dict(m.named_parameters()), x[k]) for k, m in enumerate(clients)]
        )
    assert batched.shape == (3, 4, 10)
    assert not torch.allclose(separate[0], separate[1])  # the clients really differ
    torch.testing.assert_close(batched, separate, atol=1e-5, rtol=1e-5)


def test_vmap_gradients_match_per_client_gradients():
    # Batched local training needs per-client gradients, not just forward passes.
    clients = [_model("mnist1d_mlp", seed=seed) for seed in range(3)]
    params, _ = stack_module_state(clients)
    x = torch.stack([_inputs("mnist1d_mlp", batch=5, seed=k) for k in range(3)])
    y = torch.randint(0, 10, (3, 5), generator=torch.Generator().manual_seed(0))
    base = clients[0]

    def loss(p, xb, yb):
        return torch.nn.functional.cross_entropy(functional_call(base, p, (xb,)), yb)

    batched = vmap(torch.func.grad(loss))(params, x, y)
    for k, model in enumerate(clients):
        single = torch.func.grad(loss)(dict(model.named_parameters()), x[k], y[k])
        for key, value in single.items():
            torch.testing.assert_close(batched[key][k], value, atol=1e-5, rtol=1e-5)


def test_cifar_cnn_ignores_memory_format():
    model = _model("cnn")
    x = _inputs("cnn", batch=2)
    with torch.no_grad():
        torch.testing.assert_close(model(x.to(memory_format=torch.channels_last)), model(x))


def test_mnist1d_models_are_small():
    assert count_parameters(MNIST1DMLP()) < 50_000
    assert count_parameters(MNIST1DCNN()) < 50_000


def test_build_model_uses_input_channels_and_length():
    assert build_model("cnn", (1, 32, 32), 10).conv1.in_channels == 1
    assert build_model("resnet18gn", (1, 32, 32), 10).conv1.in_channels == 1
    assert build_model("mnist1d_mlp", (60,), 10).fc1.in_features == 60
    assert build_model("mnist1d_cnn", (60,), 10)(torch.zeros(2, 60)).shape == (2, 10)


@pytest.mark.parametrize(
    "name, shape",
    [("cnn", (40,)), ("cnn", (3, 28, 28)), ("resnet18gn", (40,)), ("mnist1d_cnn", (3, 32, 32)),
     ("fmnist_cnn", (1, 32, 32)), ("fmnist_cnn", (784,)), ("vgg11gn", (3, 28, 28)), ("vgg11gn", (40,)),
     ("mnist1d_cnn", (10,)), ("mnist1d_mlp", (3, 32, 32)), ("alexnet_gn", (3, 32, 32)), ("alexnet_gn", (40,))],
)
def test_build_model_rejects_shapes_the_model_cannot_take(name, shape):
    with pytest.raises(ValueError) as info:
        build_model(name, shape, 10)
    message = str(info.value)
    assert name in message and str(list(shape)) in message and "accepts" in message


def test_build_model_rejects_unknown_names_listing_the_allowed_ones():
    with pytest.raises(ValueError) as info:
        build_model("vgg16", IMAGE_SHAPE, 10)
    assert all(name in str(info.value) for name in MODEL_NAMES)


def test_build_model_rejects_bad_class_counts():
    with pytest.raises(ValueError):
        build_model("cnn", IMAGE_SHAPE, 0)


@pytest.mark.parametrize(
    "dataset, model",
    [
        ("cifar10", "cnn"),
        ("CIFAR100", "cnn"),
        ("fmnist", "fmnist_cnn"),
        ("pacs", "alexnet_gn"),
        ("mnist1d", "mnist1d_cnn"),
        ("synthetic", "mnist1d_cnn"),
    ],
)
def test_default_model_for(dataset, model):
    assert default_model_for(dataset) == model
    assert model in MODEL_NAMES


def test_default_model_for_unknown_dataset():
    with pytest.raises(ValueError, match="imagenet"):
        default_model_for("imagenet")
