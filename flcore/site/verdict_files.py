"""The verdicts as files on the site: ``claims.json`` and ``claims.csv``.

``flcore book`` writes both into :data:`FOLDER` after deciding the claims, and the Jupyter
Book build copies that folder to the root of the HTML site (``html_extra_path`` in
``_config.yml``), so a reader downloads ``claims.json`` and ``claims.csv`` beside
``index.html``:

- ``claims.json``: a JSON array of the objects ``flcore claims --scale S --json`` prints,
  one per claim, in the same order -- verdicts, comparisons, gaps, intervals, p, q, and each
  cell's per-seed values (``per_seed``: seed, value, flag);
- ``claims.csv``: one row per comparison of every claim (:data:`CSV_COLUMNS`), its per-seed
  values as ``seed:value`` lists, ``;``-separated, a flagged seed as ``seed:value(flag)``.
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path

#: Where ``flcore book`` writes the files, relative to the repository root.
FOLDER = Path("book") / "_verdicts"
#: The files' names (also their paths on the built site, from its root).
JSON_NAME, CSV_NAME = "claims.json", "claims.csv"
#: The columns of ``claims.csv``, one row per comparison.
CSV_COLUMNS = ("claim", "paper", "by", "scale", "claim_verdict", "claim_verdict_corrected", "claim_q", "comparison",
               "better", "worse", "n", "published_gap", "gap", "units", "interval_95_low", "interval_95_high",
               "margin", "verdict", "verdict_text", "p", "counted_in", "better_per_seed", "worse_per_seed", "reason")


def _seeds_text(rows: Sequence[dict] | None) -> str:
    return ";".join(f"{r['seed']}:{'' if r['value'] is None else r['value']}" + (f"({r['flag']})" if r["flag"] else "")
                    for r in rows or [])


def _cell_text(cell: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in cell.items())


def csv_rows(results: Sequence[dict]) -> list[dict]:
    """One row of :data:`CSV_COLUMNS` per comparison of ``results``."""
    rows = []
    for result in results:
        for number, comparison in enumerate(result["comparisons"], 1):
            interval = comparison.get("interval_95") or [None, None]
            per_seed = comparison.get("per_seed") or {}
            rows.append({
                "claim": result["id"], "paper": result["paper"], "by": result.get("by"), "scale": result.get("scale"),
                "claim_verdict": result["verdict"], "claim_verdict_corrected": result.get("verdict_corrected"),
                "claim_q": result.get("q"), "comparison": number,
                "better": _cell_text(comparison["cells"]["better"]), "worse": _cell_text(comparison["cells"]["worse"]),
                "n": len(comparison.get("seeds") or []), "published_gap": comparison["published"]["gap"],
                "gap": comparison.get("gap"), "units": comparison.get("units"),
                "interval_95_low": interval[0], "interval_95_high": interval[1], "margin": comparison.get("margin"),
                "verdict": comparison["verdict"], "verdict_text": comparison.get("verdict_text"),
                "p": comparison.get("p"), "counted_in": comparison.get("counted_in"),
                "better_per_seed": _seeds_text(per_seed.get("better")),
                "worse_per_seed": _seeds_text(per_seed.get("worse")), "reason": comparison.get("reason")})
    return rows


def csv_text(results: Sequence[dict]) -> str:
    """``claims.csv``'s text."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(csv_rows(results))
    return out.getvalue()


def write_verdict_files(root: Path, results: Sequence[dict]) -> list[Path]:
    """Write ``claims.json`` and ``claims.csv`` of ``results`` under ``root / FOLDER``."""
    folder = root / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / JSON_NAME, folder / CSV_NAME]
    paths[0].write_text(json.dumps(list(results), indent=1) + "\n")
    paths[1].write_text(csv_text(results))
    return paths


def links_html(depth: int) -> str:
    """Links to the two files from a page ``depth`` folders below the site's root (raw
    HTML: the files are not pages of the book)."""
    prefix = "../" * depth
    return (f'<a href="{prefix}{JSON_NAME}">{JSON_NAME}</a> and <a href="{prefix}{CSV_NAME}">{CSV_NAME}</a>')
