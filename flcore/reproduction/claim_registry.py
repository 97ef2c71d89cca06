"""The papers' claims as data: what a claim says, which cells of which table it compares and
with what margin and seeds, parsed from each paper's ``claims.yaml`` and registered.

Each paper's claims are data (``<paper folder>/claims.yaml``): the claim in words, the
sentence of the paper that makes it (``quote``), the artifacts whose runs check it, the
metric and which direction is better, what it is *about* (the data set and model, and any
other setting, in flcore's names), and one or more *comparisons* between two cells of a
published table -- ``better`` should beat ``worse`` -- with the numbers the paper prints for
both.  A cell is a set of run labels (``dataset``, ``algorithm``, ``alpha``, ...) as the
artifact's :class:`~flcore.reproduction.artifacts.RunSpec` s carry them, so a cell names the
same runs at every scale.  A claim may state a ``margin`` (``{stand_in, paper_fraction,
reason}``) and ``seeds`` (``{n, reason}``) for itself or a comparison, and may be made *by*
a later source than its paper (``by: {citation, quote, url}``, ``against``: the paper's claim
it contests), and may declare what its runs must offer (``needs: [images]``, with the
paper's words as ``needs_reason``; :mod:`flcore.models.traits`).  A claim on a metric that
counts rounds states the paper's run length (``published_rounds``) where the paper gives it.
:mod:`flcore.reproduction.claims` decides them.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from flcore.models.traits import TRAITS
from flcore.reproduction.paper_registry import get_paper, paper_ids
from flcore.reproduction.paper_yaml import read_yaml


@dataclass(frozen=True)
class Margin:
    """A margin stated in ``claims.yaml``: ``stand_in`` in the stand-in's
    units below the paper scale, ``paper_fraction`` of the published gap at the paper scale
    (either may be None: the default then), and why."""

    stand_in: float | None = None
    paper_fraction: float | None = None
    reason: str = ""


@dataclass(frozen=True)
class Seeds:
    """Seeds stated in ``claims.yaml`` for a claim or a comparison, over the plan
    (:mod:`flcore.reproduction.seed_plan`), and why."""

    n: int
    reason: str


@dataclass(frozen=True)
class By:
    """Who makes a claim when it is not the paper of its artifact: the
    citation, the sentence that makes it and, when public, where it is."""

    citation: str
    quote: str
    url: str = ""


@dataclass(frozen=True)
class Comparison:
    """``better`` beats ``worse`` (cells: run labels); the paper's numbers for both (None:
    a later claim's source prints none); ``about``: what it is about where it differs from
    its claim's; ``stand_in_labels``: its cells' labels below the paper scale."""

    better: dict[str, Any]
    worse: dict[str, Any]
    published_better: float | None
    published_worse: float | None
    about: dict[str, Any] = field(default_factory=dict)
    margin: Margin | None = None
    stand_in_labels: dict[str, Any] = field(default_factory=dict)
    seeds: Seeds | None = None  # the seeds it trains at the small scale, over the plan

    @property
    def published_gap(self) -> float | None:
        if self.published_better is None or self.published_worse is None:
            return None
        return self.published_better - self.published_worse

    def cells_at(self, scale: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(better, worse)``: the run labels of its cells at ``scale``."""
        if scale == "paper" or not self.stand_in_labels:
            return self.better, self.worse
        return {**self.better, **self.stand_in_labels}, {**self.worse, **self.stand_in_labels}


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    text: str
    quote: str
    artifacts: tuple[str, ...]
    source: str
    metric: str
    direction: str  # "higher" | "lower"
    comparisons: tuple[Comparison, ...]
    about: dict[str, Any] = field(default_factory=dict)
    main_setting: dict[str, Any] = field(default_factory=dict)
    one_seed: str = ""  # why its cells keep one seed at every scale (the book's time budget)
    margin: Margin | None = None  # its comparisons' unless one states its own
    by: By | None = None  # a later source that makes it; None: the paper
    against: str = ""  # the id of the claim it contests, when the registry has it
    seeds: Seeds | None = None  # its comparisons' seeds at the small scale, over the plan
    needs: tuple[str, ...] = ()  # traits its runs' model must offer (flcore.models.traits)
    needs_reason: str = ""  # why, in the paper's words
    published_rounds: int | None = None  # the paper's run length, for a metric counted in rounds

    @property
    def sign(self) -> int:
        return 1 if self.direction == "higher" else -1

    def about_of(self, comparison: Comparison) -> dict[str, Any]:
        return {**self.about, **comparison.about}


def datasets_of(value) -> tuple[str, ...]:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


def _margin(raw, where: str) -> Margin | None:
    """A ``margin`` mapping of ``claims.yaml``, checked."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not set(raw) <= {"stand_in", "paper_fraction", "reason"}:
        raise ValueError(f"{where}: margin must be a mapping of stand_in, paper_fraction and reason")
    values = {}
    for key in ("stand_in", "paper_fraction"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
            raise ValueError(f"{where}: margin {key} must be a positive number, got {value!r}")
        values[key] = None if value is None else float(value)
    reason = str(raw.get("reason") or "").strip()
    if not reason:
        raise ValueError(f"{where}: a margin needs its reason")
    return Margin(values["stand_in"], values["paper_fraction"], reason)


def _seeds(raw, where: str) -> Seeds | None:
    """A ``seeds`` mapping of ``claims.yaml`` (``{n: 4, reason: ...}``), checked."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"n", "reason"}:
        raise ValueError(f"{where}: seeds must be a mapping of n and reason")
    n, reason = raw["n"], str(raw["reason"] or "").strip()
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 100:
        raise ValueError(f"{where}: seeds n must be a whole number from 1 to 100, got {n!r}")
    if not reason:
        raise ValueError(f"{where}: stated seeds need their reason")
    return Seeds(n, reason)


#: The fields of a claim's ``by`` mapping; ``url`` may be left out.
BY_FIELDS = ("citation", "quote", "url")


def _by(raw, where: str) -> By | None:
    """A ``by`` mapping of ``claims.yaml``, checked."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not set(raw) <= set(BY_FIELDS):
        raise ValueError(f"{where}: by must be a mapping of {', '.join(BY_FIELDS)} (url optional), got {raw!r}")
    values = {}
    for key in BY_FIELDS:
        value = raw.get(key, "")
        if not isinstance(value, str) or (key != "url" and not value.strip()):
            raise ValueError(f"{where}: by {key} must be a non-empty string, got {value!r}")
        values[key] = value.strip()
    if values["url"] and not values["url"].startswith("https://"):
        raise ValueError(f"{where}: by url must start with https://, got {values['url']!r}")
    return By(**values)


def _needs(raw, reason, where: str) -> tuple[tuple[str, ...], str]:
    """A claim's ``needs`` list (traits of :mod:`flcore.models.traits`) and its
    ``needs_reason``, checked."""
    if raw is None:
        if reason:
            raise ValueError(f"{where}: needs_reason without needs")
        return (), ""
    if not isinstance(raw, list) or not raw or not all(isinstance(n, str) for n in raw):
        raise ValueError(f"{where}: needs must be a list of traits from {', '.join(TRAITS)}, got {raw!r}")
    unknown = [n for n in raw if n not in TRAITS]
    if unknown:
        raise ValueError(f"{where}: needs: unknown trait {unknown[0]!r}; choose from {', '.join(TRAITS)}")
    reason = reason.strip() if isinstance(reason, str) else ""
    if not reason:
        raise ValueError(f"{where}: needs needs its needs_reason (the paper's words)")
    return tuple(dict.fromkeys(raw)), reason


def _published(raw: dict, by: By | None, where: str) -> tuple[float | None, float | None]:
    """A comparison's published numbers: required of the paper's own claims; a later
    claim's source may print none (``null`` or left out)."""
    published = raw.get("published")
    if published is None and by is not None:
        return None, None
    if not isinstance(published, dict) or not {"better", "worse"} <= set(published):
        raise ValueError(f"{where}: a comparison needs published better and worse numbers")
    values = []
    for key in ("better", "worse"):
        value = published[key]
        if value is None and by is not None:
            values.append(None)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"{where}: published {key} must be a number, got {value!r}")
        else:
            values.append(float(value))
    return values[0], values[1]


def _published_rounds(raw, where: str) -> int | None:
    """A claim's ``published_rounds`` (the paper's total rounds T), checked."""
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ValueError(f"{where}: published_rounds must be a whole number of rounds, at least 1, got {raw!r}")
    return raw


def parse_claims(paper_file: Path) -> list[Claim]:
    """The claims of one paper's ``claims.yaml``, checked (one ``ValueError`` line, else)."""
    data = read_yaml(paper_file)
    paper = data["paper"]
    main = dict(data.get("main_setting") or {})
    if not {"dataset", "model"} <= set(main):
        raise ValueError(f"{paper_file.name}: main_setting needs a dataset and a model")
    out = []
    for raw in data["claims"]:
        if not {"dataset", "model"} <= set(raw.get("about") or {}):
            raise ValueError(f"{paper_file.name}: claim {raw['id']}: 'about' must name a dataset and a model")
        where = f"{paper_file.name}: claim {raw['id']}"
        by = _by(raw.get("by"), where)
        against = raw.get("against") or ""
        if against and (by is None or not isinstance(against, str)):
            raise ValueError(f"{where}: against names the contested claim's id, and only a claim made by a later "
                             "source (by) contests one")
        comparisons = tuple(Comparison(dict(c["better"]), dict(c["worse"]), *_published(c, by, where),
                                       dict(c.get("about") or {}), _margin(c.get("margin"), where),
                                       dict(c.get("stand_in_labels") or {}), _seeds(c.get("seeds"), where))
                            for c in raw["comparisons"])
        needs, needs_reason = _needs(raw.get("needs"), raw.get("needs_reason"), where)
        direction = raw.get("direction", "higher")
        if direction not in ("higher", "lower"):
            raise ValueError(f"{paper_file.name}: claim {raw['id']}: direction must be higher or lower")
        out.append(Claim(id=raw["id"], paper=paper, text=raw["text"],
                         quote=raw.get("quote", by.quote if by is not None else ""),
                         artifacts=tuple(raw["artifacts"]), source=raw.get("source", ""),
                         metric=raw.get("metric", "accuracy"), direction=direction, comparisons=comparisons,
                         about=dict(raw["about"]), main_setting=main, one_seed=raw.get("one_seed", ""),
                         margin=_margin(raw.get("margin"), where), by=by, against=against,
                         seeds=_seeds(raw.get("seeds"), where), needs=needs, needs_reason=needs_reason,
                         published_rounds=_published_rounds(raw.get("published_rounds"), where)))
    return out


def all_claims() -> tuple[Claim, ...]:
    """Every claim of the registered papers (``<paper folder>/claims.yaml``), in their order."""

    return _all_claims(paper_ids())


@lru_cache(maxsize=4)
def _all_claims(papers: tuple[str, ...]) -> tuple[Claim, ...]:

    claims: list[Claim] = []
    for paper in papers:
        path = get_paper(paper).folder / "claims.yaml"
        if path.is_file():
            claims.extend(parse_claims(path))
    ids = [c.id for c in claims]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ValueError(f"claim ids used twice: {', '.join(duplicates)}")
    check_against(claims)
    return tuple(claims)


def check_against(claims: Sequence[Claim]) -> None:
    """A later claim's ``against`` names a claim of ``claims`` made by a paper (one line, else)."""
    own = {c.id for c in claims if c.by is None}
    unknown = sorted(f"{c.id} (against {c.against})" for c in claims if c.against and c.against not in own)
    if unknown:
        raise ValueError(f"later claims against no paper's claim of the registry: {', '.join(unknown)}")


def contested_by(claim_id: str) -> list[Claim]:
    """The later claims against ``claim_id`` (``against``), in the registry's order."""
    return [c for c in all_claims() if c.against == claim_id]


def later_claims(paper: str) -> list[Claim]:
    """The claims about ``paper`` 's artifacts made by a later source (``by``)."""
    return [c for c in all_claims() if c.paper == paper and c.by is not None]


def get_claim(claim_id: str) -> Claim:
    for claim in all_claims():
        if claim.id == claim_id:
            return claim
    raise KeyError(f"unknown claim {claim_id!r}")


def claims_by_artifact() -> dict[str, list[Claim]]:
    out: dict[str, list[Claim]] = {}
    for claim in all_claims():
        for artifact_id in claim.artifacts:
            out.setdefault(artifact_id, []).append(claim)
    return out
