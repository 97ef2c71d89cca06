"""Accuracy of the global model on each client's local data (FedSAM paper, Fig. 3a/b).

The paper plots, for CIFAR-100 and FedAvg, the accuracy of the global model on every
client's 500 training images as rounds pass (one colour per client; at alpha = 0 a
client holds one class).  The engine records it as ``client_accuracy`` (a list of
floats, one per client) in the run's ``metrics.jsonl`` every ``eval_every`` rounds.

- :func:`client_accuracy_history` reads those rows back as a long table;
- :func:`per_client_accuracy` evaluates any flat parameter vector on every client's data;
- :func:`final_client_accuracy` is the fallback for runs stored without the record: it
  rebuilds the run's data and evaluates the stored final model only (the store does
  not keep the global models of past rounds).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import torch

from flcore.config import resolve_config
from flcore.devices import resolve_device
from flcore.flat import FlatModel
from flcore.models import build_model
from flcore.sim import build_federated_data
from flcore.store import Run

METRIC_KEY = "client_accuracy"


@torch.no_grad()
def per_client_accuracy(flat, w: torch.Tensor, data, batch_size: int = 4096) -> torch.Tensor:
    """Accuracy of the model ``w`` on each client's training data: a ``[num_clients]`` tensor.

    ``flat`` is a :class:`flcore.flat.FlatModel`, ``data`` a
    :class:`flcore.FederatedData`; inputs are normalised the way training sees them,
    without augmentation.  All clients are evaluated in batches of about ``batch_size``
    samples (one forward pass over the training set) and split afterwards.
    """
    indices = data.client_indices
    if not indices:
        return torch.zeros(0)
    order = torch.cat(indices)
    correct = torch.empty(order.numel(), dtype=torch.bool, device=order.device)
    for start in range(0, order.numel(), batch_size):
        idx = order[start:start + batch_size]
        x = data.train_inputs(idx, None)
        correct[start:start + idx.numel()] = flat.forward(w, x).argmax(dim=1) == data.train_y[idx]
    sizes = [int(i.numel()) for i in indices]
    return torch.stack([part.double().mean() if part.numel() else torch.tensor(float("nan"), dtype=torch.float64,
                                                                              device=part.device)
                        for part in torch.split(correct, sizes)]).cpu()


def client_accuracy_history(metrics: pd.DataFrame) -> pd.DataFrame:
    """Long table ``round, client, accuracy`` from a run's metric rows (empty if the run
    was stored without the record)."""
    columns = ["round", "client", "accuracy"]
    if metrics is None or METRIC_KEY not in metrics.columns:
        return pd.DataFrame(columns=columns)
    rows = []
    for round_, values in zip(metrics["round"], metrics[METRIC_KEY]):
        if not isinstance(values, (list, tuple)):
            continue
        rows.extend((int(round_), client, float(acc)) for client, acc in enumerate(values))
    return pd.DataFrame(rows, columns=columns)


def final_client_accuracy(run_dir, device: str = "cpu", data_root: str | None = None) -> pd.Series:
    """Fallback: the stored final model of a finished run, evaluated on each client.

    Rebuilds the run's federated data from its stored config (same seed, same partition)
    and returns a Series indexed by client id.  Only the final round is available this
    way: the store does not keep the global models of past rounds.
    """

    run_dir = Path(run_dir)
    run = Run(run_dir, run_dir.name)
    state = run.load_final_model(map_location="cpu")
    if state is None:
        raise FileNotFoundError(f"run {run_dir} has no final model (status {run.status().get('status')})")
    values = dict(run.config())
    if data_root is not None:
        values["data_root"] = data_root
    cfg = resolve_config({**values, "device": device})
    dev = resolve_device(cfg.device)
    data = build_federated_data(cfg, dev)
    module = build_model(cfg.model, data.input_shape, data.num_classes)
    module.load_state_dict(state)
    module = module.to(dev)
    flat = FlatModel(module)
    acc = per_client_accuracy(flat, flat.flatten(), data)
    return pd.Series(acc.numpy(), name="accuracy", index=pd.RangeIndex(len(acc), name="client"))
