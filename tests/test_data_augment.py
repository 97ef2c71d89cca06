"""Tensor crop + flip augmentation and normalisation."""
import pytest
import torch
import torchvision.transforms.functional as TF

from flcore.data import apply_crop_flip, draw_crop_flip, normalize


def generator(seed):
    return torch.Generator().manual_seed(seed)


def test_draws_have_the_right_range_type_and_frequencies():
    dy, dx, flip = draw_crop_flip(20000, generator(0), padding=4)
    assert dy.dtype == dx.dtype == torch.int64 and flip.dtype == torch.bool
    assert dy.shape == dx.shape == flip.shape == (20000,)
    for offsets in (dy, dx):
        assert offsets.min() == 0 and offsets.max() == 8
        assert torch.bincount(offsets, minlength=9).min() > 20000 / 9 * 0.9
    # Bernoulli(0.5) mean over 20000 draws has std 0.0035.
    assert abs(flip.float().mean().item() - 0.5) < 0.02


def test_draws_depend_only_on_the_generator_seed():
    first, second = draw_crop_flip(64, generator(5)), draw_crop_flip(64, generator(5))
    assert all(torch.equal(a, b) for a, b in zip(first, second))
    other = draw_crop_flip(64, generator(6))
    assert not all(torch.equal(a, b) for a, b in zip(first, other))


def test_centre_crop_without_flip_is_the_identity():
    x = torch.rand(5, 3, 8, 8)
    centre = torch.full((5,), 4)
    out = apply_crop_flip(x, centre, centre, torch.zeros(5, dtype=torch.bool), padding=4)
    assert torch.equal(out, x)


def test_hand_built_crop_and_flip():
    x = torch.tensor([[[[1., 2., 3.],
                        [4., 5., 6.],
                        [7., 8., 9.]]]])
    # Zero-padded by 1 this is a 5x5 image; the crop at row 0, column 2 reads rows 0-2 and
    # columns 2-4 of it: the padding row on top, the padding column on the right.
    dy, dx = torch.tensor([0]), torch.tensor([2])
    cropped = apply_crop_flip(x, dy, dx, torch.tensor([False]), padding=1)
    assert torch.equal(cropped, torch.tensor([[[[0., 0., 0.],
                                                [2., 3., 0.],
                                                [5., 6., 0.]]]]))
    flipped = apply_crop_flip(x, dy, dx, torch.tensor([True]), padding=1)
    assert torch.equal(flipped, torch.tensor([[[[0., 0., 0.],
                                                [0., 3., 2.],
                                                [0., 6., 5.]]]]))


def test_flip_at_centre_equals_tensor_flip():
    x = torch.rand(4, 3, 6, 6)
    centre = torch.full((4,), 2)
    out = apply_crop_flip(x, centre, centre, torch.ones(4, dtype=torch.bool), padding=2)
    assert torch.equal(out, x.flip(-1))


def test_matches_torchvision_pad_crop_flip_per_image():
    x = torch.rand(16, 2, 5, 7)  # non-square, to catch swapped rows and columns
    dy, dx, flip = draw_crop_flip(16, generator(1), padding=3)
    out = apply_crop_flip(x, dy, dx, flip, padding=3)
    for i in range(16):
        expected = TF.crop(TF.pad(x[i], [3], fill=0), int(dy[i]), int(dx[i]), 5, 7)
        if flip[i]:
            expected = TF.hflip(expected)
        assert torch.equal(out[i], expected)


def test_batch_result_equals_sample_by_sample_and_input_is_untouched():
    x = torch.rand(10, 3, 32, 32)
    original = x.clone()
    dy, dx, flip = draw_crop_flip(10, generator(2))
    batched = apply_crop_flip(x, dy, dx, flip)
    one_by_one = torch.cat([apply_crop_flip(x[i:i + 1], dy[i:i + 1], dx[i:i + 1],
                                            flip[i:i + 1]) for i in range(10)])
    assert torch.equal(batched, one_by_one)
    assert torch.equal(x, original)


def test_normalize_per_channel():
    x = torch.full((2, 3, 2, 2), 0.5)
    out = normalize(x, (0.5, 0.25, 0.0), (1.0, 0.5, 0.25))
    assert torch.equal(out[:, 0], torch.zeros(2, 2, 2))
    assert torch.equal(out[:, 1], torch.full((2, 2, 2), 0.5))
    assert torch.equal(out[:, 2], torch.full((2, 2, 2), 2.0))


def test_normalize_without_statistics_is_a_no_op():
    x = torch.randn(4, 40)
    assert normalize(x, None, None) is x
    with pytest.raises(ValueError, match="both"):
        normalize(x, (0.1,), None)
