"""The artifact registry: each table or figure id of a paper's ``inventory.yaml`` -> the runs it reads.

An :class:`Artifact` names its notebook (``notebooks/<paper>/<id>.ipynb``) and a function
``runs(scale, seeds) -> [RunSpec]``.  A :class:`RunSpec` is one training run: the labels
a table or plot groups it by (dataset as the paper names it, algorithm, alpha, clients
per round, seed) and the config values handed to :func:`flcore.resolve_config`.
Two specs with the same resolved config are the same run (the run store names runs by
the hash of their canonical config), so runs shared between artifacts -- Table 2 and
Fig. 11 of the FedSAM paper read the same runs -- are computed once.

A spec whose method is not registered in :data:`flcore.algorithms.METHOD_NAMES` (the
``+swa`` methods until they exist) is *pending*: it is listed, never run, and tables
show its cells as ``pending``.  The check happens at call time, so such rows fill in
by themselves once the method is registered.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from flcore.planning.planner import records_more
from flcore.planning.spec import RunSpec
from flcore.reproduction.inventory import entry, inventory
from flcore.reproduction.lookup import registered

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Artifact:
    """A table or figure of a paper and how flcore regenerates it; its kind and caption
    are its paper's ``inventory.yaml`` entry's (:func:`register_artifacts`)."""

    id: str
    paper: str
    runs: Callable[[str, Sequence[int]], list[RunSpec]] = field(repr=False)
    notebook: str = ""  # relative to notebooks/, without suffix; default "<paper>/<id>"
    page_title: str = ""  # a page of the book's own (:func:`register_page`): in no inventory
    #: a page of the book's own: its own questions (``() -> [Claim]``), which its verdict box counts
    questions: Callable[[], list] | None = field(default=None, repr=False, compare=False)

    @property
    def kind(self) -> str:
        """``"table"`` | ``"figure"``, from the inventory; ``"page"`` for a page of the book's own."""
        return "page" if self.page_title else entry(self.id).kind

    @property
    def caption(self) -> str:
        """The inventory's caption (a page of the book's own: its title)."""
        return self.page_title or entry(self.id).caption

    @property
    def title(self) -> str:
        """``"Table 2: <caption>"`` (a page of the book's own: its title)."""
        return self.page_title or f"{entry(self.id).label}: {self.caption}"

    @property
    def notebook_path(self) -> str:
        return f"notebooks/{self.notebook or f'{self.paper}/{self.id}'}.ipynb"

    @property
    def book_path(self) -> str:
        """Where ``flcore reproduce`` writes the executed notebook (the book's source)."""
        return f"book/artifacts/{self.paper}/{self.id}.ipynb"


def no_runs(scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """The ``runs`` of an artifact that trains nothing (configuration tables, published-only pages)."""
    return []


ARTIFACTS: dict[str, Artifact] = {}


def register_artifacts(paper: str, runs: Mapping[str, Callable[[str, Sequence[int]], list[RunSpec]]]) -> None:
    """Register tables and figures of the registered ``paper``: artifact id -> its ``runs``
    function (:func:`no_runs` for a page that trains nothing).  Every id must be an entry of
    the paper's ``inventory.yaml``, which gives its kind and caption; the only way a paper
    registers its artifacts."""
    for artifact_id, function in runs.items():
        try:
            item = entry(artifact_id)
        except KeyError:
            raise KeyError(f"{artifact_id!r} is not in {paper}'s inventory.yaml; add its entry there first") from None
        if item.paper != paper:
            raise ValueError(f"{artifact_id!r} belongs to {item.paper!r}, not {paper!r}")
        if artifact_id in ARTIFACTS:
            raise ValueError(f"artifact {artifact_id!r} registered twice")
        ARTIFACTS[artifact_id] = Artifact(artifact_id, paper, function)


def register_page(paper: str, page_id: str, title: str, runs: Callable[[str, Sequence[int]], list[RunSpec]],
                  questions: Callable[[], list] | None = None) -> None:
    """Register a page of the book's own under ``paper``'s chapter: trained and built like
    an artifact, but no table or figure of the paper (in no inventory, nothing published);
    ``questions``: the page's own comparisons as claims, which its verdict box counts."""
    if page_id in ARTIFACTS or page_id in {item.id for item in inventory()}:
        raise ValueError(f"artifact {page_id!r} registered twice")
    ARTIFACTS[page_id] = Artifact(page_id, paper, runs, page_title=title, questions=questions)


def artifact_ids() -> list[str]:
    return list(ARTIFACTS)


def get_artifact(artifact_id: str) -> Artifact:
    return registered(ARTIFACTS, artifact_id, "artifact")


def runs_for(artifact_ids: Iterable[str], scale: str, seeds: Sequence[int] = (0,)) -> list[RunSpec]:
    """The distinct runs of several artifacts (a run shared by two artifacts once: the
    request that records more, :func:`~flcore.planning.planner.records_more`, so that a page
    reading the clients' accuracy finds it however the book orders its pages), then the
    pending ones."""
    by_id: dict[str, RunSpec] = {}
    pending: list[RunSpec] = []
    for aid in artifact_ids:
        for spec in get_artifact(aid).runs(scale, seeds):
            if not spec.available:
                pending.append(spec)
                continue
            run_id = spec.run_id()
            if run_id not in by_id or records_more(spec.resolve(), by_id[run_id].resolve()):
                by_id[run_id] = spec  # a replaced request keeps the first one's place
    return list(by_id.values()) + pending


#: Config fields shown in an artifact's "settings used" table, in this order.
SETTINGS_COLUMNS = ("dataset", "model", "partition", "alpha", "clients", "per_round", "samples_per_client",
                    "num_samples", "rounds", "local_epochs", "batch_size", "lr", "momentum", "weight_decay",
                    "rho", "eta", "swa_start", "swa_cycle", "swa_lr_min", "eval_every", "eval_last", "seed")


def settings_table(specs: Sequence[RunSpec], by: Sequence[str] = ("algorithm",),
                   grid: Sequence[str] = ("alpha", "per_round", "seed")) -> pd.DataFrame:
    """What the runs of ``specs`` use, one row per ``by`` group.

    Values come from the resolved configs, restricted to :data:`SETTINGS_COLUMNS` and to
    the fields that enter a run's id (``rho`` only for the SAM methods ...).  The grid
    axes (``grid``: shown by the results table itself) are left out; a field with
    several values in a group lists them (``"0.02 / 0.05"``).  Fields equal in every run
    go to ``frame.attrs["common"]`` so the table shows only what varies.
    """
    rows = []
    for spec in specs:
        if not spec.available:
            continue
        canonical = spec.resolve().canonical()
        row = {key: spec.labels[key] for key in by if key in spec.labels}
        row["method"] = spec.method
        row.update({("data" if key == "dataset" else key): canonical[key] for key in SETTINGS_COLUMNS
                    if key in canonical and key not in grid})
        rows.append(row)
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows).dropna(axis=1, how="all")
    common = {}
    for column in [c for c in frame.columns if c not in by]:
        values = frame[column].dropna().astype(str).unique()
        if len(values) == 1 and frame[column].notna().all():
            common[column] = frame[column].iloc[0]
            frame = frame.drop(columns=column)

    def join(values):
        distinct = list(dict.fromkeys(str(v) for v in values if not pd.isna(v)))
        return " / ".join(distinct) if distinct else "\u2013"

    table = frame.groupby(list(by), sort=False).agg(join).reset_index()
    table.attrs["common"] = {k: (v.item() if hasattr(v, "item") else v) for k, v in common.items()}
    return table
