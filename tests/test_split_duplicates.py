"""Split files that name one image twice, under one spelling or two: refused before any
compute, with both entries named.  A CIFAR-10 image is its training-set index
(``img_0001_label_3.png`` and ``img_1_label_3.png`` are image 1), a CIFAR-100 image its
file name normalised (case, white space, a leading ``./``, Unicode form)."""
from __future__ import annotations

import json
import unicodedata

import numpy as np
import pytest

from flcore.data import DatasetError, read_split_file
from flcore.data.split_file import SplitFile, image_key, split_indices

LABELS10 = np.array([i % 10 for i in range(40)])  # image i has label i % 10
NAMES100 = [f"apple_s_{i:06d}.png" for i in range(40)]
LABELS100 = np.array([i % 100 for i in range(40)])


def _write(tmp_path, users: dict[str, list[tuple[str, int]]], name="split.json"):
    doc = {"users": list(users), "num_samples": [len(v) for v in users.values()],
           "user_data": {u: {"x": [x for x, _ in v], "y": [y for _, y in v]} for u, v in users.items()}}
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("first,second", [
    ("img_1_label_1.png", "img_0001_label_1.png"),
    ("img_0012_label_2.png", "img_12_label_2.png"),
    ("img_3_label_3.png", "img_003_label_3.png"),
    ("img_5_label_5.png", "img_5_label_6.png"),  # one index, two labels: still one image
])
@pytest.mark.parametrize("across", [True, False])
def test_two_spellings_of_one_cifar10_image_are_refused_naming_both(tmp_path, first, second, across):
    if across:
        users = {"a": [(first, 0), ("img_20_label_0.png", 0)], "b": [("img_21_label_1.png", 1), (second, 0)]}
    else:
        users = {"a": [(first, 0), ("img_20_label_0.png", 0), (second, 0)], "b": [("img_21_label_1.png", 1)]}
    with pytest.raises(DatasetError) as caught:
        read_split_file(_write(tmp_path, users))
    message = str(caught.value)
    assert repr(first) in message and repr(second) in message
    assert ("by users 'a' and 'b'" in message) if across else ("twice by user 'a'" in message)
    assert "\n" not in message


@pytest.mark.parametrize("spelling", ["APPLE_S_000007.png", " apple_s_000007.png", "./apple_s_000007.png",
                                      "apple_s_000007.PNG"])
def test_two_spellings_of_one_cifar100_image_are_refused(tmp_path, spelling):
    users = {"a": [("apple_s_000007.png", 7)], "b": [(spelling, 7)]}
    with pytest.raises(DatasetError, match=r"one image is named by users 'a' and 'b'.*entry 0 .*of user 'b'"):
        read_split_file(_write(tmp_path, users))


def test_a_cifar100_name_in_another_unicode_form_is_one_image():
    composed, decomposed = "caf\u00e9_s_000001.png", unicodedata.normalize("NFD", "caf\u00e9_s_000001.png")
    assert composed != decomposed and image_key(composed) == image_key(decomposed)
    assert image_key("img_0001_label_3.png") == image_key("img_1_label_3.png") == 1
    assert image_key("img_1_label_3.png") != image_key("img_2_label_3.png")


def test_distinct_images_are_accepted_and_mapped(tmp_path):
    users = {"a": [("img_0001_label_1.png", 1), ("img_12_label_2.png", 2)], "b": [("img_2_label_2.png", 2)]}
    split = read_split_file(_write(tmp_path, users))
    assert [p.tolist() for p in split_indices(split, "cifar10", LABELS10)] == [[1, 12], [2]]
    users = {"a": [("APPLE_S_000003.png", 3)], "b": [("./apple_s_000005.png", 5)]}
    split = read_split_file(_write(tmp_path, users, "c100.json"))
    assert [p.tolist() for p in split_indices(split, "cifar100", LABELS100, NAMES100)] == [[3], [5]]


def test_entries_on_one_training_image_are_refused_where_names_become_indices():
    """The mapping to training indices checks again (a split built in code, not read from
    a file): two entries on one image are refused there too, both named."""
    split = SplitFile("in-memory", "0" * 64, ("a", "b"), (("img_1_label_1.png",), ("img_0001_label_1.png",)),
                      ((1,), (1,)))
    with pytest.raises(DatasetError, match=r"by users 'a' and 'b': entry 0 'img_1_label_1.png' of user 'a' "
                                           r"and entry 0 'img_0001_label_1.png' of user 'b'"):
        split_indices(split, "cifar10", LABELS10)


def test_a_key_given_twice_in_the_json_is_refused(tmp_path):
    """A split file whose user appears twice under ``user_data`` would keep the last entry
    silently: refused, naming the key."""
    path = _write(tmp_path, {"a": [("img_1_label_1.png", 1)], "b": [("img_2_label_2.png", 2)]})
    text = path.read_text().replace('"b": {"x": ["img_2_label_2.png"]', '"a": {"x": ["img_3_label_3.png"], "y": [3]}, '
                                    '"b": {"x": ["img_2_label_2.png"]')
    path.write_text(text)
    with pytest.raises(DatasetError, match="key 'a' given twice"):
        read_split_file(path)
