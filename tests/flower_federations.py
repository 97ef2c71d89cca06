"""The federations of the Flower equality tests: one method of every family on a
smoke-sized MNIST-1D federation (float64 data and model, so Flower's run and flcore's
compare to rounding), and FedAvg on a flwr-datasets Dirichlet partition (float32, the
named data set and model).  Shared by ``test_flower.py`` and the simulation it starts in
a private network namespace."""
from __future__ import annotations

import torch

from flcore import FederatedData
from flcore.data import load_dataset
from flcore.models import build_model

CLIENTS, PER_ROUND, ROUNDS, SEED = 6, 3, 3, 0
COMMON = {"dataset": "mnist1d", "scale": "smoke", "num_samples": 600, "per_round": PER_ROUND, "local_steps": 2,
          "batch_size": 32, "lr": 0.05, "momentum": 0.0, "rounds": ROUNDS, "seed": SEED, "device": "cpu",
          "engine": "sequential"}
#: family -> (method, its hyper-parameters); SWA and IMA start at round 1 so that they act
FAMILIES = {
    "FedSAM": ("fedsam", {"rho": 0.05}),
    "FedASAM": ("fedasam", {"rho": 0.5, "eta": 0.2}),
    "SCAFFOLD": ("scaffold", {}),
    "FedDyn": ("feddyn", {"feddyn_alpha": 0.01}),
    "FedGloSS": ("fedgloss-sam", {"rho": 0.05, "gloss_rho_server": 0.05, "gloss_beta": 10.0}),
    "NaiveFedGloSS": ("naivefedgloss", {"rho": 0.05, "gloss_rho_server": 0.05, "gloss_beta": 10.0}),
    "FedGF": ("fedgf", {"rho": 0.05}),
    "FedLESAM": ("fedlesam", {"rho": 0.05}),
    "IMA": ("fedavg+ima", {"ima_start": 1, "ima_window": 2}),
    "SWA": ("fedsam+swa", {"rho": 0.05, "swa_start": 1, "swa_cycle": 1}),
}


def mnist1d():
    return load_dataset("mnist1d", num_samples=600, seed=SEED)


def float64_data(dataset) -> FederatedData:
    return FederatedData.from_tensors(dataset.train_x.double(), dataset.train_y, dataset.test_x.double(),
                                      dataset.test_y, partition="dirichlet", alpha=0.5, num_clients=CLIENTS,
                                      seed=SEED)


def float64_model(data: FederatedData):
    torch.manual_seed(SEED)
    return build_model("mnist1d_mlp", data.input_shape, data.num_classes).double()


def config(method: str, **fields) -> dict:
    return {**COMMON, "method": method, **fields}


def dirichlet_partitioner():
    from flwr_datasets.partitioner import DirichletPartitioner

    return DirichletPartitioner(num_partitions=CLIENTS, partition_by="label", alpha=0.5, seed=SEED,
                                min_partition_size=5)


def federations():
    """``{family: Federation}``: FedAvg on the flwr-datasets partition, the others on
    flcore's Dirichlet partition in float64."""
    from flcore.flower import Federation

    data = float64_data(mnist1d())
    feds = {"FedAvg": Federation.from_config(config("fedavg", model="mnist1d_mlp"),
                                             partitioner=dirichlet_partitioner(), name="FedAvg")}
    for family, (method, fields) in FAMILIES.items():
        feds[family] = Federation.from_config(config(method, **fields), data=data, model=float64_model(data),
                                              name=family)
    return feds
