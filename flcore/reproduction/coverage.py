"""What flcore does with each table and figure: its status (module docstring of
:mod:`flcore.reproduction.inventory`), the scales its page was built at and the claims that
read it -- the rows of ``flcore reproduce --list --json``.

Above the inventory, the artifact registry and the claims, which it joins.
"""
from __future__ import annotations

from flcore.reproduction.artifacts import artifact_ids
from flcore.reproduction.claims import claims_by_artifact
from flcore.reproduction.inventory import NOT_REGENERABLE_CLASSES, InventoryEntry, inventory

STATUSES = ("regenerated", "pending", "not_regenerable")
SCALES = ("smoke", "small", "paper")


def status(item: InventoryEntry) -> str:
    """``regenerated`` | ``pending`` | ``not_regenerable`` (module docstring)."""

    if item.cls in NOT_REGENERABLE_CLASSES:
        return "not_regenerable"
    return "regenerated" if item.id in artifact_ids() else "pending"


def scales_built(artifact_id: str, manifest: dict) -> list[str]:
    """Scales at which the page of ``artifact_id`` was last built successfully."""
    built = (manifest.get("artifacts", {}).get(artifact_id) or {}).get("built", {})
    return [scale for scale in SCALES if scale in built]


def coverage(manifest: dict) -> list[dict]:
    """One row per table or figure: the fields of ``flcore reproduce --list --json``."""

    by_artifact = claims_by_artifact()
    rows = []
    for item in inventory():
        state = status(item)
        rows.append({"id": item.id, "paper": item.paper, "kind": item.kind, "class": item.cls,
                     "caption": item.caption, "status": state,
                     "scales_built": scales_built(item.id, manifest) if state == "regenerated" else [],
                     "claims": [claim.id for claim in by_artifact.get(item.id, [])],
                     "reason": item.not_regenerable or None})
    return rows
