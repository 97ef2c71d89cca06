"""Client partitions: sizes, disjointness, class structure, determinism, cache."""
import importlib

import numpy as np
import pytest
import torch

from flcore.data import cache_dir, partition, partition_dirichlet, partition_iid, partition_shards

# ``flcore.data.partition`` is also the name of the re-exported function, so fetch the module.
partition_module = importlib.import_module("flcore.data.partition")


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FLCORE_CACHE", str(tmp_path / "cache"))


def balanced_labels(num_classes, per_class):
    """Labels 0..C-1, ``per_class`` of each, interleaved so that order carries no class."""
    return np.tile(np.arange(num_classes), per_class)


def assert_disjoint_with_sizes(parts, num_examples, size):
    for part in parts:
        assert part.dtype == np.int64
        assert len(part) == size
        assert np.all(np.diff(part) > 0)  # sorted, no repeats within a client
    everything = np.concatenate(parts)
    assert len(np.unique(everything)) == len(everything)  # no example on two clients
    assert everything.min() >= 0 and everything.max() < num_examples


def classes_of(parts, labels):
    return [set(np.unique(labels[part]).tolist()) for part in parts]


# --- iid -------------------------------------------------------------------------------

def test_iid_sizes_default_and_explicit():
    labels = balanced_labels(10, 103)  # 1030 examples
    parts = partition_iid(labels, 10, seed=1)
    assert_disjoint_with_sizes(parts, 1030, 103)
    parts = partition_iid(labels, 7, samples_per_client=20, seed=1)
    assert_disjoint_with_sizes(parts, 1030, 20)


def test_iid_determinism():
    labels = balanced_labels(10, 100)
    same = zip(partition_iid(labels, 10, seed=3), partition_iid(labels, 10, seed=3))
    assert all(np.array_equal(a, b) for a, b in same)
    differ = zip(partition_iid(labels, 10, seed=3), partition_iid(labels, 10, seed=4))
    assert not all(np.array_equal(a, b) for a, b in differ)


def test_too_many_samples_requested_is_an_error():
    with pytest.raises(ValueError, match="cannot give 11 clients 10 examples"):
        partition_iid(np.zeros(100, dtype=np.int64), 11, samples_per_client=10)
    with pytest.raises(ValueError, match="cannot give"):
        partition_dirichlet(np.zeros(5, dtype=np.int64), 10, alpha=1.0)


# --- Dirichlet (Hsu et al. 2019) -------------------------------------------------------

def test_dirichlet_alpha_zero_gives_one_class_per_client_spread_evenly():
    labels = balanced_labels(10, 400)
    parts = partition_dirichlet(labels, 100, alpha=0, samples_per_client=40, seed=0)
    assert_disjoint_with_sizes(parts, 4000, 40)
    classes = classes_of(parts, labels)
    assert all(len(c) == 1 for c in classes)
    clients_per_class = np.bincount([next(iter(c)) for c in classes], minlength=10)
    assert clients_per_class.tolist() == [10] * 10


def test_dirichlet_takes_random_examples_of_a_class():
    # With alpha=0 each class is split among 10 clients.  Were examples taken in index
    # order, the 100 client sets would be the same blocks for every seed.
    labels = balanced_labels(10, 400)

    def client_sets(seed):
        parts = partition_dirichlet(labels, 100, alpha=0, samples_per_client=40, seed=seed)
        return {frozenset(part.tolist()) for part in parts}

    assert client_sets(0).isdisjoint(client_sets(1))


def test_dirichlet_alpha_zero_with_uneven_division_of_clients():
    labels = balanced_labels(10, 100)
    parts = partition_dirichlet(labels, 25, alpha=0, samples_per_client=30, seed=5)
    classes = classes_of(parts, labels)
    assert all(len(c) == 1 for c in classes)
    clients_per_class = np.bincount([next(iter(c)) for c in classes], minlength=10)
    assert sorted(clients_per_class.tolist()) == [2] * 5 + [3] * 5


def test_dirichlet_exhausted_class_is_topped_up_from_remaining_examples():
    # Class 0 has 5 examples, class 1 has 95; 2 clients x 50, one class each.  The client
    # of class 0 must take its 5 and then 45 of class 1 (the only class left); the other
    # client takes 50 of class 1, whichever order they are served in.
    labels = np.array([0] * 5 + [1] * 95)
    for seed in range(4):
        parts = partition_dirichlet(labels, 2, alpha=0, samples_per_client=50, seed=seed)
        assert_disjoint_with_sizes(parts, 100, 50)
        counts = sorted(np.bincount(labels[p], minlength=2).tolist() for p in parts)
        assert counts == [[0, 50], [5, 45]]


def test_dirichlet_large_alpha_is_close_to_iid():
    labels = balanced_labels(10, 400)
    parts = partition_dirichlet(labels, 20, alpha=1000, samples_per_client=100, seed=0)
    shares = np.array([np.bincount(labels[p], minlength=10) / 100 for p in parts])
    assert (shares > 0).all()  # every client holds every class
    # Multinomial(100, 1/10) shares have std 0.03; 0.15 is 5 std.
    assert np.abs(shares - 0.1).max() < 0.15
    # Contrast: a small alpha concentrates each client on few classes.
    parts = partition_dirichlet(labels, 20, alpha=0.1, samples_per_client=100, seed=0)
    skewed = np.array([np.bincount(labels[p], minlength=10) / 100 for p in parts])
    assert skewed.max(axis=1).mean() > 0.6


@pytest.mark.parametrize("alpha", [1.0, 10.0])
def test_dirichlet_alpha_is_the_total_concentration(alpha):
    # With q ~ Dir(alpha/C, ..., alpha/C): E[sum_c q_c^2] = (alpha/C + 1) / (alpha + 1).
    # Counts n ~ Multinomial(S, q) add the sampling term: E[sum (n_c/S)^2]
    # = E[sum q_c^2] (1 - 1/S) + 1/S.  alpha=1, C=10: 0.55225; alpha=10: 0.18591.
    # Reading alpha per class instead would give 0.18591 and 0.10982 respectively.
    # Classes hold 20000 examples each, so none is exhausted and the formula is exact.
    num_classes, per_client = 10, 200
    labels = balanced_labels(num_classes, 20000)
    parts = partition_dirichlet(labels, 200, alpha=alpha, samples_per_client=per_client,
                                seed=0)
    shares = np.array([np.bincount(labels[p], minlength=num_classes) / per_client
                       for p in parts])
    expected_q2 = (alpha / num_classes + 1) / (alpha + 1)
    expected = expected_q2 * (1 - 1 / per_client) + 1 / per_client
    tolerance = {1.0: 0.06, 10.0: 0.02}[alpha]
    assert (shares ** 2).sum(axis=1).mean() == pytest.approx(expected, abs=tolerance)


def test_dirichlet_many_clients_many_classes_small_data_terminates():
    labels = balanced_labels(100, 50)  # 5000 examples, all of them handed out
    parts = partition_dirichlet(labels, 500, alpha=0.3, samples_per_client=10, seed=0)
    assert_disjoint_with_sizes(parts, 5000, 10)
    assert len(np.unique(np.concatenate(parts))) == 5000
    tiny = np.array([0, 0, 1, 2, 2, 2, 3])
    parts = partition_dirichlet(tiny, 7, alpha=0.3, samples_per_client=1, seed=1)
    assert_disjoint_with_sizes(parts, 7, 1)


def test_dirichlet_infinite_alpha_matches_the_uniform_prior():
    labels = balanced_labels(4, 10000)
    parts = partition_dirichlet(labels, 10, alpha=float("inf"), samples_per_client=400)
    shares = np.array([np.bincount(labels[p], minlength=4) / 400 for p in parts])
    # Multinomial(400, 1/4): share std is 0.0217; 0.1 is more than 4.5 std.
    assert np.abs(shares - 0.25).max() < 0.1


def test_dirichlet_rejects_negative_or_nan_alpha():
    labels = balanced_labels(10, 10)
    for alpha in (-0.1, float("nan")):
        with pytest.raises(ValueError, match="alpha"):
            partition_dirichlet(labels, 10, alpha=alpha)


def test_dirichlet_determinism_and_torch_labels():
    labels = balanced_labels(10, 100)
    a = partition_dirichlet(labels, 10, alpha=0.5, seed=7)
    b = partition_dirichlet(torch.from_numpy(labels), 10, alpha=0.5, seed=7)
    c = partition_dirichlet(labels, 10, alpha=0.5, seed=8)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_partitions_leave_global_random_state_alone():
    state = np.random.get_state()
    partition_dirichlet(balanced_labels(10, 100), 10, alpha=0.5)
    partition_shards(balanced_labels(10, 100), 10, 2)
    partition_iid(balanced_labels(10, 100), 10)
    after = np.random.get_state()
    assert np.array_equal(state[1], after[1]) and state[2:] == after[2:]


# --- shards (McMahan et al. 2017) ------------------------------------------------------

@pytest.mark.parametrize("num_classes,per_class,num_clients,k",
                         [(10, 100, 20, 2), (10, 6000, 100, 2), (10, 300, 50, 3),
                          (5, 40, 10, 2)])
def test_shards_give_exactly_k_classes_on_balanced_labels(num_classes, per_class,
                                                          num_clients, k):
    labels = balanced_labels(num_classes, per_class)
    size = num_classes * per_class // num_clients
    for seed in range(5):
        parts = partition_shards(labels, num_clients, k, seed=seed)
        assert_disjoint_with_sizes(parts, len(labels), size)
        for part in parts:
            counts = np.bincount(labels[part], minlength=num_classes)
            # k classes, one whole shard of each
            assert sorted(counts[counts > 0].tolist()) == [size // k] * k


def test_shards_class_pairs_depend_on_seed():
    labels = balanced_labels(10, 100)
    pairs = [sorted(tuple(sorted(c)) for c in classes_of(partition_shards(labels, 20, 2,
                                                                          seed=s), labels))
             for s in range(2)]
    assert pairs[0] != pairs[1]


def test_shards_draw_their_examples_at_random_within_a_class():
    labels = balanced_labels(10, 100)

    def shard_sets(seed):
        parts = partition_shards(labels, 20, 2, seed=seed)
        return {frozenset(part[labels[part] == c].tolist())
                for part in parts for c in np.unique(labels[part])}

    first = shard_sets(0)
    assert len(first) == 40
    assert first != shard_sets(1)


def test_shards_with_remainder_leave_examples_unused():
    labels = np.random.default_rng(0).integers(0, 10, 1003)
    parts = partition_shards(labels, 10, 2, seed=0)
    assert_disjoint_with_sizes(parts, 1003, 100)  # shards of 1003 // 20 = 50


# --- dispatch and cache ----------------------------------------------------------------

def test_partition_dispatch_matches_direct_calls():
    labels = balanced_labels(10, 100)
    cases = [
        (partition("dirichlet", labels, 10, alpha=0.5, samples_per_client=50, seed=2),
         partition_dirichlet(labels, 10, 0.5, 50, seed=2)),
        (partition("shards", labels, 10, classes_per_client=2, seed=2, cache=False),
         partition_shards(labels, 10, 2, seed=2)),
        (partition("iid", labels, 10, seed=2), partition_iid(labels, 10, seed=2)),
    ]
    for got, expected in cases:
        assert len(got) == len(expected)
        assert all(np.array_equal(a, b) for a, b in zip(got, expected))


def test_partition_cache_round_trip(monkeypatch):
    labels = balanced_labels(10, 100)
    first = partition("dirichlet", labels, 10, alpha=0.3, seed=1)
    files = list((cache_dir() / "partitions").glob("*.npz"))
    assert len(files) == 1
    assert not list((cache_dir() / "partitions").glob("*.tmp"))

    def must_not_run(*args, **kwargs):
        raise AssertionError("partition recomputed instead of read from the cache")

    monkeypatch.setattr(partition_module, "partition_dirichlet", must_not_run)
    second = partition("dirichlet", labels, 10, alpha=0.3, seed=1)
    assert len(second) == 10
    assert all(a.dtype == np.int64 and np.array_equal(a, b) for a, b in zip(second, first))

    # Changing one label (or the seed) is a different key, so it is computed afresh.
    changed = labels.copy()
    changed[0] = 1
    with pytest.raises(AssertionError, match="recomputed"):
        partition("dirichlet", changed, 10, alpha=0.3, seed=1)
    with pytest.raises(AssertionError, match="recomputed"):
        partition("dirichlet", labels, 10, alpha=0.3, seed=2)


def test_corrupt_cache_file_is_recomputed():
    labels = balanced_labels(10, 100)
    first = partition("iid", labels, 10, seed=4)
    (path,) = (cache_dir() / "partitions").glob("*.npz")
    path.write_bytes(b"not a zip file")
    again = partition("iid", labels, 10, seed=4)
    assert all(np.array_equal(a, b) for a, b in zip(again, first))
    assert path.read_bytes()[:2] == b"PK"  # rewritten as a valid npz


def test_partition_validates_parameters():
    labels = balanced_labels(10, 10)
    with pytest.raises(ValueError, match="dirichlet, shards, iid"):
        partition("pathological", labels, 10)
    with pytest.raises(ValueError, match="needs alpha"):
        partition("dirichlet", labels, 10)
    with pytest.raises(ValueError, match="needs classes_per_client"):
        partition("shards", labels, 10)
    with pytest.raises(ValueError, match="alpha is not a parameter of the 'iid'"):
        partition("iid", labels, 10, alpha=0.5)
    with pytest.raises(ValueError, match="samples_per_client is not a parameter"):
        partition("shards", labels, 10, classes_per_client=2, samples_per_client=5)
    with pytest.raises(ValueError, match="1-d integer"):
        partition("iid", labels.astype(np.float32), 10)


def test_exhausted_prior_falls_back_to_the_proportions_of_unused_examples():
    # The client's prior is all on class 0, which has 10 examples left; the other 500 it
    # needs come from classes 1 and 2 in proportion to what is left of them (900 : 100),
    # i.e. Binomial(500, 0.9) of class 1: mean 450, std 6.7.
    draw = partition_module._draw_class_counts
    counts = draw(np.random.default_rng(0), np.array([1.0, 0.0, 0.0]),
                  np.array([10, 900, 100]), 510)
    assert counts.sum() == 510 and counts[0] == 10
    assert 420 <= counts[1] <= 480


# ----------------------------------------------------------------------------- domains

def _two_domain_labels():
    # domain 0: 120 examples, domain 1: 60, domain 2: 90; 5 classes each
    domains = np.repeat([0, 1, 2], [120, 60, 90])
    labels = np.concatenate([np.arange(120) % 5, np.arange(60) % 5, np.arange(90) % 5])
    return labels, domains


def test_domains_partition_gives_each_client_one_domain_in_equal_groups():
    from flcore.data import partition_domains

    labels, domains = _two_domain_labels()
    clients = partition_domains(labels, domains, 6, alpha=0.1, seed=3)
    owned = [set(domains[c].tolist()) for c in clients]
    assert all(len(o) == 1 for o in owned)
    assert sorted(o.pop() for o in owned) == [0, 0, 1, 1, 2, 2]
    union = np.concatenate(clients)
    assert len(union) == len(set(union.tolist())) == len(labels)  # the sizes divide: the whole set
    # within a domain each client gets n_d / (K / D) examples (the Dirichlet partition's sizes)
    assert sorted(len(c) for c in clients) == [30, 30, 45, 45, 60, 60]


def test_domains_partition_skews_labels_within_a_domain_and_is_deterministic():
    from flcore.data import partition, partition_domains

    labels, domains = _two_domain_labels()
    a = partition_domains(labels, domains, 30, alpha=0.01, seed=5)
    b = partition_domains(labels, domains, 30, alpha=0.01, seed=5)
    c = partition_domains(labels, domains, 30, alpha=0.01, seed=6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert any(not np.array_equal(x, y) for x, y in zip(a, c))
    # alpha 0.01 over 5 classes: most clients hold one dominant class; alpha 1e4: near uniform
    def dominant(clients):
        return np.mean([np.bincount(labels[k], minlength=5).max() / len(k) for k in clients])
    assert dominant(a) > 0.7 > 0.55 > dominant(partition_domains(labels, domains, 30, alpha=1e4, seed=5))
    cached = partition("domains", labels, 30, alpha=0.01, domains=domains, seed=5, cache=False)
    assert all(np.array_equal(x, y) for x, y in zip(a, cached))


def test_domains_partition_refuses_bad_input():
    from flcore.data import partition, partition_domains

    labels, domains = _two_domain_labels()
    with pytest.raises(ValueError, match="multiple of the 3 domains"):
        partition_domains(labels, domains, 7, alpha=0.1)
    with pytest.raises(ValueError, match="needs domains"):
        partition("domains", labels, 6, alpha=0.1, cache=False)
    with pytest.raises(ValueError, match="needs domains"):
        partition("dirichlet", labels, 6, alpha=0.1, domains=domains, cache=False)
    with pytest.raises(ValueError, match="needs alpha"):
        partition("domains", labels, 6, domains=domains, cache=False)


def test_domains_partition_in_the_config():
    from flcore.config import resolve_config
    from flcore.errors import ConfigError

    cfg = resolve_config(dataset="pacs", scale="paper", method="fedavg")
    assert (cfg.partition, cfg.alpha, cfg.clients) == ("domains", 0.1, 80)
    assert cfg.partition_args() == {"alpha": 0.1}
    with pytest.raises(ConfigError, match="'domains' needs a multi-domain data set"):
        resolve_config(dataset="mnist1d", scale="smoke", partition="domains", alpha=0.1)
    with pytest.raises(ConfigError, match="must be a multiple of 4"):
        resolve_config(dataset="pacs", scale="paper", clients=81)
