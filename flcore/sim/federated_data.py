"""A dataset split across clients and held on the compute device (docs/design.md section 6).

The whole training set lives in one tensor on the device; a client is a tensor of indices
into it.  Batches are gathered by index and augmented on tensors (random crop with padding
4 and horizontal flip for CIFAR), so there is no DataLoader and no per-client copy.

Data sets of 8-bit images (CIFAR, Fashion-MNIST, PACS: :attr:`flcore.data.Dataset.train_pixels`)
live on the device as their uint8 pixels, zero-padded once for the random crop (CIFAR-10:
50,000 x 40 x 40 x 3 bytes, 240 MB, against 960 MB for padded float32 images); a batch
is gathered as bytes and converted there (``/ 255``, then the normalisation), which gives
bit for bit the numbers of cropping and normalising float images.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from flcore.data import (
    DatasetError,
    hold_out_validation,
    load_dataset,
    normalize,
    partition,
    read_split_file,
    split_indices,
)
from flcore.data import partition as make_partition
from flcore.data.cifar import train_filenames
from flcore.data.datasets import pixels_to_images
from flcore.data.partition import LABEL_PARTITION_KINDS as PARTITION_KINDS
from flcore.errors import ConfigError

#: Zero padding of the random crop (the papers' ``RandomCrop(32, padding=4)``).
CROP_PADDING = 4


@dataclass
class FederatedData:
    #: [N, ...] unnormalised, on the device: floating inputs, or the uint8 pixels
    #: [N, C, H, W] of 8-bit images (the image is pixels / 255)
    train_x: torch.Tensor
    train_y: torch.Tensor  # [N]
    test_x: torch.Tensor  # normalised once, on the device
    test_y: torch.Tensor
    client_indices: list[torch.Tensor]  # one index tensor per client, on the device
    num_classes: int
    augment: bool
    mean: tuple[float, ...] | None
    std: tuple[float, ...] | None
    test_domain: torch.Tensor | None = None  # [M] domain of each test example (multi-domain data)
    domain_names: tuple[str, ...] | None = None

    @property
    def num_clients(self) -> int:
        return len(self.client_indices)

    @classmethod
    def from_tensors(cls, x, y, test_x, test_y, partition="iid", *, num_clients: int | None = None,
                     alpha: float | None = None, classes_per_client: int | None = None,
                     samples_per_client: int | None = None, num_classes: int | None = None,
                     seed: int = 0, mean: Sequence[float] | None = None, std: Sequence[float] | None = None,
                     device: str | torch.device = "cpu") -> FederatedData:
        """Your own tensors as a federated dataset (no named dataset, no scale).

        ``x [N, ...]`` and ``test_x [M, ...]`` are floating inputs with the same
        per-sample shape, ``y [N]`` and ``test_y [M]`` integer labels in
        ``0..num_classes-1`` (``num_classes`` defaults to the largest label + 1).
        ``partition`` is one of flcore's partitions -- ``"iid"`` (``samples_per_client``
        optional), ``"dirichlet"`` (``alpha``; Hsu et al. 2019), ``"shards"``
        (``classes_per_client``) -- over ``num_clients`` clients, drawn with ``seed``; or
        an explicit list of client index lists into ``x`` (disjoint, non-empty).
        ``mean``/``std`` (per channel, dimension 1) normalise train and test inputs;
        without them the inputs are used as given.  Inputs are not augmented.  Every
        check fails before anything is copied, with a one-line error naming the argument.
        """

        x = _floating("x", x)
        test_x = _floating("test_x", test_x)
        if x.dim() < 2 or x.shape[0] == 0:
            raise ValueError(f"x: expected a non-empty [N, ...] tensor of inputs, got shape {tuple(x.shape)}")
        if test_x.shape[1:] != x.shape[1:]:
            raise ValueError(f"test_x: per-sample shape {tuple(test_x.shape[1:])} differs from x's "
                             f"{tuple(x.shape[1:])}")
        y = _labels("y", y, x.shape[0], "x")
        test_y = _labels("test_y", test_y, test_x.shape[0], "test_x")
        largest = int(max(y.max(), test_y.max())) if test_y.numel() else int(y.max())
        if num_classes is None:
            num_classes = largest + 1
        elif isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 2:
            raise ValueError(f"num_classes: expected an integer >= 2, got {num_classes!r}")
        for name, labels in (("y", y), ("test_y", test_y)):
            if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
                raise ValueError(f"{name}: labels must lie in 0..{num_classes - 1} (num_classes={num_classes}), "
                                 f"got {int(labels.min())}..{int(labels.max())}")
        if (mean is None) != (std is None):
            raise ValueError("mean/std: give both (per-channel values) or neither")
        if mean is not None:
            channels = x.shape[1]
            for name, values in (("mean", mean), ("std", std)):
                if len(values) != channels:
                    raise ValueError(f"{name}: expected {channels} values (x.shape[1]), got {len(values)}")
            if any(not v > 0 for v in std):
                raise ValueError(f"std: values must be > 0, got {list(std)}")
            mean, std = tuple(float(v) for v in mean), tuple(float(v) for v in std)
        parts = _client_parts(partition, y, x.shape[0], num_clients, alpha, classes_per_client,
                              samples_per_client, seed)
        device = torch.device(device)
        test_x = normalize(test_x, mean, std) if mean is not None else test_x
        return cls(
            train_x=x.to(device), train_y=y.to(device), test_x=_channels_last(test_x.to(device)),
            test_y=test_y.to(device),
            client_indices=[torch.as_tensor(p, dtype=torch.long).to(device) for p in parts],
            num_classes=int(num_classes), augment=False, mean=mean, std=std,
        )

    def to(self, device: str | torch.device) -> FederatedData:
        """The same data on ``device`` (``self`` when it is already there)."""
        device = torch.device(device)
        if self.train_x.device == device or (device.type == self.train_x.device.type and device.index is None):
            return self
        move = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for name in ("train_x", "train_y", "test_x", "test_y", "test_domain"):
            if move[name] is not None:
                move[name] = move[name].to(device)
        move["client_indices"] = [idx.to(device) for idx in self.client_indices]
        moved = FederatedData(**move)
        moved.__dict__["_host_indices"] = self.host_client_indices()
        return moved

    @property
    def pixels(self) -> bool:
        """True when ``train_x`` holds uint8 pixels (8-bit images), not floating inputs."""
        return self.train_x.dtype == torch.uint8

    def host_client_indices(self) -> list[torch.Tensor]:
        """Each client's sample indices on the CPU, copied once: the round's draws are made
        on the host (:mod:`flcore.sim.sampling`) and never read the device."""
        cached = self.__dict__.get("_host_indices")
        if cached is None:
            cached = [idx.cpu() for idx in self.client_indices]
            self.__dict__["_host_indices"] = cached
        return cached

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.train_x.shape[1:])

    @property
    def client_sizes(self) -> list[int]:
        return [int(idx.numel()) for idx in self.client_indices]

    def client_of_sample(self) -> torch.Tensor:
        """``[N]``: the client holding each training sample (-1 if none)."""
        owner = torch.full((self.train_x.shape[0],), -1, dtype=torch.long, device=self.train_x.device)
        for k, idx in enumerate(self.client_indices):
            owner[idx] = k
        return owner

    def _prepared_train_x(self) -> torch.Tensor:
        """The training set as the steps read it, built once, images stored channels-last
        (``[N, H + 2p, W + 2p, C]``, zero-padded by ``CROP_PADDING`` when augmented).

        uint8 pixels stay pixels (padded with black, 0).  Floating inputs are padded and
        then normalised: padding before normalising gives the pad pixels the value
        ``-mean / std``, exactly what cropping the unnormalised image and normalising
        afterwards (torchvision's order) gives, and normalisation is the same element-wise
        operation on the whole set as on a batch, so every step's input is bit-for-bit the
        one the crop-then-normalise order makes; a step is then one gather.  Pixels are
        converted after the gather (:meth:`_from_pixels`) with the same operations.
        """
        cached = self.__dict__.get("_prepared")
        if cached is not None:
            return cached
        x = self.train_x
        if x.dim() == 4 and self.augment:
            x = F.pad(x, (CROP_PADDING,) * 4)
        if self.mean is not None and not self.pixels:
            x = normalize(x, self.mean, self.std)
        if x.dim() == 4:
            x = x.permute(0, 2, 3, 1).contiguous()
        self.__dict__["_prepared"] = x
        return x

    def _from_pixels(self, x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """Gathered uint8 pixels ``[n, H, W, C]`` as normalised images of ``dtype``
        ``[n, C, H, W]`` (channels-last memory): ``(p / 255 - mean) / std``, the operations
        and order of :func:`flcore.data.normalize` on ``Dataset.train_x``."""
        x = x.to(dtype).div_(255.0)
        if self.mean is not None:
            mean = torch.as_tensor(self.mean, dtype=dtype, device=x.device)
            std = torch.as_tensor(self.std, dtype=dtype, device=x.device)
            x = x.sub_(mean).div_(std)
        return x.permute(0, 3, 1, 2)

    def _centre(self, prepared: torch.Tensor) -> torch.Tensor:
        """The unpadded images of the prepared set (a view)."""
        if not self.augment:
            return prepared
        height, width = self.train_x.shape[2:]
        return prepared[:, CROP_PADDING:CROP_PADDING + height, CROP_PADDING:CROP_PADDING + width]

    def eval_train_inputs(self) -> torch.Tensor:
        """The whole training set, normalised and not augmented (for per-client accuracy
        and the analysis tools): a view of the prepared set, so nothing is copied (for
        pixels, a converted copy; :meth:`train_inputs` converts only what it reads)."""
        x = self._prepared_train_x()
        if x.dim() != 4:
            return x
        if self.pixels:
            return self._from_pixels(self._centre(x), torch.get_default_dtype())
        return self._centre(x).permute(0, 3, 1, 2)

    def train_inputs(self, index: torch.Tensor, crop: tuple | None,
                     dtype: torch.dtype | None = None) -> torch.Tensor:
        """Training inputs for global indices ``index`` (any shape), augmented with the
        given crop/flip draws (same shape as ``index``) and normalised: the crop of
        :func:`flcore.data.apply_crop_flip` read straight from the prepared set (images
        come out channels-last).  ``dtype``: the floating type pixels are converted to
        (default: torch's default dtype); floating inputs keep theirs."""
        shape = index.shape
        flat_index = index.reshape(-1)
        prepared = self._prepared_train_x()
        if prepared.dim() != 4:
            x = prepared[flat_index]
        elif self.augment and crop is not None:
            height, width = self.train_x.shape[2:]
            dy, dx, flip = (t.reshape(-1).to(prepared.device) for t in crop)
            rows = dy[:, None] + torch.arange(height, device=prepared.device)
            cols = dx[:, None] + torch.arange(width, device=prepared.device)
            cols = torch.where(flip[:, None], cols.flip(1), cols)  # a flip reverses the columns read
            x = prepared[flat_index[:, None, None], rows[:, :, None], cols[:, None, :]]
        else:
            x = self._centre(prepared)[flat_index]
        if x.dim() == 4:
            x = self._from_pixels(x, dtype or torch.get_default_dtype()) if self.pixels else x.permute(0, 3, 1, 2)
        elif self.pixels:
            x = x.to(dtype or torch.get_default_dtype()).div_(255.0)
        return x.reshape(*shape, *x.shape[1:])


def _floating(name: str, value) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    if not value.is_floating_point():
        raise TypeError(f"{name}: expected floating inputs (e.g. float32), got dtype {value.dtype}")
    if not bool(torch.isfinite(value).all()):
        raise ValueError(f"{name}: inputs must be finite (found NaN or inf)")
    return value.detach()


def _labels(name: str, value, length: int, inputs: str) -> torch.Tensor:
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"{name}: expected a torch.Tensor, got {type(value).__name__}")
    if value.is_floating_point() or value.is_complex() or value.dtype == torch.bool:
        raise TypeError(f"{name}: expected integer class labels (e.g. torch.long), got dtype {value.dtype}")
    if value.dim() != 1:
        raise ValueError(f"{name}: expected a 1-d tensor of labels, got shape {tuple(value.shape)}")
    if value.shape[0] != length:
        raise ValueError(f"{name}: has {value.shape[0]} labels but {inputs} has {length} samples")
    return value.detach().long()


def _client_parts(partition, y: torch.Tensor, num_samples: int, num_clients, alpha, classes_per_client,
                  samples_per_client, seed) -> list:
    """One index array per client: flcore's partition by name, or the user's lists checked."""

    if isinstance(partition, str):
        if partition not in PARTITION_KINDS:
            raise ValueError(f"partition: got {partition!r}; allowed values: {', '.join(PARTITION_KINDS)} "
                             "or a list of client index lists")
        if isinstance(num_clients, bool) or not isinstance(num_clients, int) or num_clients < 1:
            raise ValueError(f"num_clients: expected an integer >= 1 with partition={partition!r}, got {num_clients!r}")
        args = {"alpha": alpha, "classes_per_client": classes_per_client, "samples_per_client": samples_per_client}
        used = {"dirichlet": ("alpha", "samples_per_client"), "dirichlet_rounded": ("alpha", "samples_per_client"),
                "shards": ("classes_per_client",), "iid": ("samples_per_client",)}[partition]
        for name, value in args.items():
            if value is not None and name not in used:
                raise ValueError(f"{name}: not a parameter of partition={partition!r} (it takes {', '.join(used)})")
        if partition.startswith("dirichlet") and (alpha is None or not alpha >= 0):
            raise ValueError(f"alpha: partition={partition!r} needs alpha >= 0, got {alpha!r}")
        if partition == "shards" and (classes_per_client is None or int(classes_per_client) < 1):
            raise ValueError(
                f"classes_per_client: partition='shards' needs an integer >= 1, got {classes_per_client!r}"
            )
        if samples_per_client is not None and (int(samples_per_client) < 1
                                               or int(samples_per_client) * num_clients > num_samples):
            raise ValueError(f"samples_per_client: got {samples_per_client!r}; need 1 <= samples_per_client "
                             f"and num_clients * samples_per_client <= {num_samples} samples")
        if num_clients > num_samples:
            raise ValueError(f"num_clients: {num_clients} clients cannot share {num_samples} samples")
        try:
            return make_partition(partition, y.cpu().numpy(), num_clients, seed=seed, cache=False,
                                  **{name: args[name] for name in used})
        except ValueError as exc:
            raise ValueError(f"partition: {exc}") from None
    if (
        isinstance(partition, (str, bytes))
        or not isinstance(partition, Sequence)
        and not isinstance(partition, torch.Tensor)
    ):
        raise TypeError(
            f"partition: expected a partition name or a list of client index lists, got {type(partition).__name__}"
        )
    if num_clients is not None and num_clients != len(partition):
        raise ValueError(f"num_clients: got {num_clients} but partition lists {len(partition)} clients")
    parts, seen = [], torch.zeros(num_samples, dtype=torch.bool)
    if len(partition) == 0:
        raise ValueError("partition: the list of client index lists is empty")
    for k, indices in enumerate(partition):
        idx = torch.as_tensor(indices)
        if idx.dim() != 1 or idx.numel() == 0 or idx.is_floating_point() or idx.dtype == torch.bool:
            raise ValueError(f"partition: client {k} needs a non-empty 1-d list of integer sample indices")
        idx = idx.long().cpu()
        if int(idx.min()) < 0 or int(idx.max()) >= num_samples:
            raise ValueError(f"partition: client {k} has indices outside 0..{num_samples - 1}")
        if bool(seen[idx].any()) or idx.unique().numel() != idx.numel():
            raise ValueError(f"partition: client {k} shares sample indices with another client (or repeats one)")
        seen[idx] = True
        parts.append(idx)
    return parts


def _channels_last(x: torch.Tensor) -> torch.Tensor:
    """Images in channels-last memory order: the same numbers, faster convolution and
    max-pool kernels on CPUs (about 13% per step for the CIFAR CNN on two cores)."""
    if x.dim() == 4:
        return x.contiguous(memory_format=torch.channels_last)
    return x


def federated_data_from_split(data, parts, device: torch.device) -> FederatedData:
    """``data`` (a :class:`flcore.data.Dataset`) split by ``parts`` (one index array per
    client) on ``device``: the test set normalised once and channels-last; 8-bit images
    as their uint8 pixels, padded for the crop on the device (module docstring)."""
    if data.test_pixels is not None:
        test_x = pixels_to_images(data.test_pixels.to(device))  # the conversion on the device
    else:
        test_x = data.test_x.to(device)
    if data.mean is not None:
        test_x = normalize(test_x, data.mean, data.std)
    prepared = None
    if data.train_pixels is not None:
        prepared = _device_pixels(data.train_pixels, device, CROP_PADDING if data.augment else 0)
        height, width = data.train_pixels.shape[1:3]
        pad = CROP_PADDING if data.augment else 0
        train_x = prepared[:, pad:pad + height, pad:pad + width].permute(0, 3, 1, 2)
    else:
        train_x = data.train_x.to(device)
    host_indices = [torch.as_tensor(p, dtype=torch.long) for p in parts]
    federated = FederatedData(
        train_x=train_x,
        train_y=data.train_y.to(device),
        test_x=_channels_last(test_x),
        test_y=data.test_y.to(device),
        client_indices=[idx.to(device) for idx in host_indices],
        num_classes=data.num_classes,
        augment=data.augment,
        mean=data.mean,
        std=data.std,
        test_domain=None if data.test_domain is None else data.test_domain.to(device),
        domain_names=data.domain_names,
    )
    federated.__dict__["_host_indices"] = host_indices
    if prepared is not None:
        federated.__dict__["_prepared"] = prepared
    return federated


def _device_pixels(pixels: torch.Tensor, device: torch.device, pad: int) -> torch.Tensor:
    """uint8 pixels ``[N, H, W, C]`` on ``device``, zero-padded by ``pad`` on each side:
    the bytes are moved as they are and padded there (one copy of the set on the device)."""
    moved = pixels.to(device)
    if not pad:
        return moved.contiguous()
    n, height, width, channels = moved.shape
    padded = torch.zeros(n, height + 2 * pad, width + 2 * pad, channels, dtype=torch.uint8, device=device)
    padded[:, pad:pad + height, pad:pad + width] = moved
    return padded


def _refuse_flwr_partition(cfg) -> None:
    if cfg.partition == "flwr":
        raise ConfigError("partition", "'flwr' takes the clients from a flwr-datasets partitioner, which only "
                          "the Python API can pass: flcore.flower.Federation.from_config(config, partitioner=...)")


def client_partition(cfg, data) -> list:
    """``cfg``'s client partition of ``data``'s training set (one index array per client);
    the "domains" partition reads each example's domain, the "file" partition its split
    file (checked against the data, and against the digest the run id holds).
    ``partition: flwr`` has no partition of its own (a flwr-datasets partitioner's, through
    :mod:`flcore.flower`)."""
    _refuse_flwr_partition(cfg)
    if cfg.partition == "file":
        split = read_split_file(cfg.split_file)
        if cfg.split_sha256 is not None and split.sha256 != cfg.split_sha256:
            raise DatasetError(f"split file {cfg.split_file} changed since the run was configured "
                               f"(sha256 {split.sha256[:12]}..., the run's {cfg.split_sha256[:12]}...)")
        names = None
        if cfg.dataset == "cifar100":
            names = train_filenames(cfg.dataset, cfg.data_root)
        return split_indices(split, cfg.dataset, data.train_y.numpy(), names)
    domains = {"domains": data.train_domain.numpy()} if cfg.partition == "domains" else {}
    return partition(cfg.partition, data.train_y.numpy(), cfg.clients, seed=cfg.seed, **cfg.partition_args(),
                     **domains)


def build_federated_data(cfg, device: torch.device) -> FederatedData:
    """Load ``cfg.dataset``, partition it over ``cfg.clients`` and move it to ``device``."""
    _refuse_flwr_partition(cfg)
    data = hold_out_validation(load_dataset(cfg.dataset, cfg.data_root, download=cfg.download,
                                            num_samples=cfg.num_samples, seed=cfg.seed), cfg.validation)
    return federated_data_from_split(data, client_partition(cfg, data), device)
