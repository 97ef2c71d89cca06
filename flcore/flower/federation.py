"""What Flower's server and clients share: the config, the data and ``w^0``."""
from __future__ import annotations

import copy
from dataclasses import dataclass

import torch
from flwr.app import ArrayRecord
from torch import nn

from flcore.config import ExperimentConfig, resolve_config
from flcore.data import hold_out_validation, load_dataset
from flcore.devices import resolve_device
from flcore.errors import ConfigError
from flcore.flat import FlatModel
from flcore.sim import FederatedData, Simulation
from flcore.sim.federated_data import federated_data_from_split

from .partitioners import partition_indices
from .strategy import FlcoreStrategy


@dataclass(eq=False)
class Federation:
    """A method on a federated data set with its initial model, for Flower.

    Build it with :meth:`from_config`, as :meth:`flcore.Simulation.from_config` builds a
    simulation (same config, data and model, so the same ``w^0``).  ``name`` tells
    federations served by one Flower app apart (default: the method's name).  The clients
    are Flower's nodes: node ``k`` (``node_config["partition-id"] == k``) is client ``k``.
    """

    name: str
    cfg: ExperimentConfig
    data: FederatedData
    flat: FlatModel
    w0: torch.Tensor
    device: torch.device

    @classmethod
    def from_config(cls, config=None, data: FederatedData | None = None, model: nn.Module | None = None,
                    partitioner=None, device: str | None = None, name: str | None = None) -> Federation:
        """A federation of ``config`` (a dict of config fields or an
        :class:`~flcore.ExperimentConfig`), with the arguments of
        :meth:`flcore.Simulation.from_config`, plus:

        ``partitioner``: a flwr-datasets partitioner (not yet given a data set) whose
        partitions of the config's named data set are the clients (``partition: flwr``;
        ``clients`` is its ``num_partitions``).  flcore gives it the training set as a
        ``datasets.Dataset`` with the columns ``label`` (the class) and ``index``
        (:func:`~flcore.flower.partition_indices`), so partition by ``"label"``.
        """
        if partitioner is not None:
            if data is not None:
                raise ValueError("partitioner: give data or a partitioner, not both")
            config, data = _partitioned(config, partitioner, device)
        sim = Simulation.from_config(config, data=data, model=model, device=device)
        return cls(name=name or sim.cfg.method, cfg=sim.cfg, data=sim.data, flat=sim.flat,
                   w0=sim.w.detach().clone(), device=sim.device)

    @property
    def num_clients(self) -> int:
        return self.data.num_clients

    def model(self) -> nn.Module:
        """A copy of the model holding ``w^0``."""
        module = copy.deepcopy(self.flat.module)
        return self.flat.load_into(module, self.w0)

    def initial_arrays(self) -> ArrayRecord:
        """``w^0`` as Flower's ``ArrayRecord`` (the model's ``state_dict``)."""
        return ArrayRecord(self.flat.state_dict(self.w0.cpu()))

    def flat_of(self, arrays: ArrayRecord) -> torch.Tensor:
        """A model ``ArrayRecord`` (a ``state_dict`` of this federation's model) as the
        flat vector ``w``, on the federation's device."""
        state = arrays.to_torch_state_dict()
        if list(state) != list(self.flat.names):
            raise ValueError(f"arrays: holds {list(state)}; this federation's model has {self.flat.names}")
        for name, shape in zip(self.flat.names, self.flat.shapes):
            if tuple(state[name].shape) != tuple(shape):
                raise ValueError(f"arrays: {name} has shape {tuple(state[name].shape)}, the model's is {tuple(shape)}")
        return torch.cat([state[name].reshape(-1) for name in self.flat.names]).to(self.device, self.w0.dtype)

    def simulation(self) -> Simulation:
        """flcore's own engine on this federation (same config, data and ``w^0``): the run
        a Flower run of it equals."""
        return Simulation.from_config(self.cfg, data=self.data, model=self.model())

    def strategy(self, timeout: float = 3600) -> FlcoreStrategy:
        """A fresh :class:`~flcore.flower.FlcoreStrategy` (server state at round 0)."""
        return FlcoreStrategy(self, timeout=timeout)


def _partitioned(config, partitioner, device) -> tuple[ExperimentConfig, FederatedData]:
    """``config`` resolved with ``partition: flwr`` and the partitioner's client count,
    and its named data set split by the partitioner."""
    if isinstance(config, ExperimentConfig):
        cfg, clients = config, None
    elif isinstance(config, (dict, type(None))):
        values = dict(config or {})
        clients = values.get("clients")
        cfg = resolve_config({**values, "partition": values.get("partition", "flwr")})
    else:
        raise TypeError(f"config must be an ExperimentConfig or a dict, got {type(config).__name__}")
    if cfg.partition != "flwr":
        raise ConfigError("partition", f"got {cfg.partition!r} with a flwr-datasets partitioner; "
                          "its partitions are the clients: use partition 'flwr'")
    dataset = hold_out_validation(load_dataset(cfg.dataset, cfg.data_root, download=cfg.download,
                                               num_samples=cfg.num_samples, seed=cfg.seed), cfg.validation)
    parts = partition_indices(partitioner, dataset.train_y)
    if clients is not None and int(clients) != len(parts):
        raise ConfigError("clients", f"got {clients!r} but the partitioner has {len(parts)} partitions")
    if cfg.clients != len(parts):
        cfg = cfg.replace(clients=len(parts))
    return cfg, federated_data_from_split(dataset, parts, resolve_device(device or cfg.device))
