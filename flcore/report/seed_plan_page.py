"""The book's Seeds page: every claim comparison's planned seeds and why, from the committed
plan (:mod:`flcore.reproduction.seed_plan`).

``python -m flcore.report.seed_plan_page > book/reference/seeds.md`` writes it; a test
checks the committed page equals what this module renders.
"""
from __future__ import annotations

import sys

from flcore.report.escaping import page_text
from flcore.reproduction.claims import METRICS, all_claims, cell_text, planned_seeds
from flcore.reproduction.seed_plan import CAP, MIN_SEEDS, OTHER_SEEDS, load_plan

INTRO = f"""# Seeds

How many seeds each claim's comparison trains at the `small` scale is fixed before its runs,
by a power analysis of its *variance* -- never of its gap, its p or its verdict -- and
written down as data (`flcore/reproduction/seed_plan.json`); the planner trains exactly
these seeds and the verdicts read exactly them.

- **Accuracy comparisons**: from the store the book had before the plan (three seeds of
  every claim cell), the standard deviation of the per-seed differences of the two cells
  (the *paired sd*), and from it the fewest seeds whose paired t test (two-sided, 5 %) finds
  a true difference of the comparison's margin (1 point of accuracy on the stand-in) four
  times in five. The comparison plans that many seeds, at least {MIN_SEEDS} and at most
  {CAP}: {CAP} seeds per comparison is what the book's 30 minutes on 2 cores buy. A
  comparison that needs more plans {CAP}, and the table says how many it would need; it
  may then stay inconclusive, and its verdict says so. Without a paired sd (a cell not yet
  run) it plans {CAP}.
- **Censored comparisons** (rounds to a target accuracy, decided by the exact sign test)
  plan {CAP}: the sign test cannot reach 5 % with fewer (2 x 0.5^5 = 0.0625).
- **Other seeded metrics** (timings, counts read from the runs' curves) plan {OTHER_SEEDS}.
- **One seed**: the analyses of stored models (Hessians, landscapes) and the claims whose
  `claims.yaml` says why (`one_seed`); their cells take the seeds another claim's
  comparison trains them at.
- A claim or comparison may state its seeds in `claims.yaml` (`seeds: {{n: 4, reason: ...}}`),
  with its reason; none does today.

A cell read by several comparisons trains the most seeds any of them plans. The plan is
remade only by `python -m flcore.reproduction.plan_seeds --store DIR --write`, which reads
the first three seeds of each cell.

"""


def rows() -> list[dict]:
    """One row per claim comparison that trains seeds at the small scale."""
    out = []
    for claim in all_claims():
        metric = METRICS.get(claim.metric)
        for index, comparison in enumerate(claim.comparisons):
            plan = planned_seeds(claim, index, "small")
            better, worse = comparison.cells_at("small")
            out.append({"claim": claim.id, "index": index, "metric": claim.metric,
                        "unit": metric.unit if metric is not None else "",
                        "comparison": f"{cell_text(better)} vs {cell_text(worse)}", "plan": plan})
    return out


def page() -> str:
    """The page's markdown."""
    plan = load_plan()
    lines = [INTRO.rstrip(), "", f"The plan was made on {plan.get('made', 'an earlier date')} "
             f"(`{plan.get('command', '')}`).", "",
             "| claim | comparison | metric | paired sd (seeds) | seeds for 80 % power | planned | why |",
             "|---|---|---|---|---|---|---|"]
    for row in rows():
        plan_ = row["plan"]
        sd = "" if plan_.paired_sd is None else f"{plan_.paired_sd:.2f} ({plan_.pairs})"
        needed = "" if plan_.needed is None else str(plan_.needed)
        lines.append(f"| {page_text(row['claim'])} #{row['index']} | {page_text(row['comparison'])} "
                     f"| {page_text(row['metric'])} | {sd} | {needed} | {plan_.seeds} "
                     f"| {page_text(plan_.reason)} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(page())
