"""The book's Reliability page, rendered from the fault matrix's JSON output.

``python benchmarks/fault_matrix.py --json > benchmarks/results/fault_matrix.json`` tries
every fault (bad configurations, kills, store corruptions, data faults, concurrent runs,
poisoned files) and counts how many were handled; ``render_reliability(path)`` turns that
file into the page.  Regenerate it with
``python -m flcore.report.reliability benchmarks/results/fault_matrix.json > book/reliability.md``;
a test keeps the committed page equal to the rendered one.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

REGENERATE = (
    "python benchmarks/fault_matrix.py --json > benchmarks/results/fault_matrix.json",
    "python -m flcore.report.reliability benchmarks/results/fault_matrix.json > book/reliability.md",
)

#: What each category tries and what counts as handled (benchmarks/fault_matrix.py).
CATEGORY_TEXT = {
    "bad_configs": ("Bad configurations",
                    "`flcore run` exits 2 with one `flcore: error:` line and no traceback, and writes "
                    "nothing to the store"),
    "kills": ("Kills at random rounds",
              "SIGKILL mid-run, then the same command: the resumed run equals an uninterrupted one "
              "bit for bit (summary and final model), each round logged once"),
    "store_corruptions": ("Store corruptions",
                          "`flcore runs` still lists every run and marks the damaged one; `flcore run` "
                          "returns the uninterrupted run's numbers (repaired from the checkpoint) or exits 3 "
                          "naming the file and the fix, never exit 0 with other numbers"),
    "data_faults": ("Data faults",
                    "bad tensors or CIFAR batch files are refused before training with a one-line error "
                    "naming the tensor or the file"),
    "concurrent_runs": ("Concurrent identical runs",
                        "all processes return the same record and the log holds each round once; "
                        "`--no-wait` against a run being trained exits 4"),
    "poisoned_files": ("Poisoned `.pt` files",
                       "a pickle that runs code is refused by `flcore run`, `runs --verify`, `analyze` and "
                       "the Python API, and its code never runs"),
}


def render_reliability(path: str | Path) -> str:
    report = json.loads(Path(path).read_text())
    lines = [
        "# Reliability",
        "",
        "The run store and flcore's inputs are built so that they cannot be turned against the",
        "user: checkpoints and final models load with `torch.load(weights_only=True)`, one",
        "process trains a run at a time (an OS file lock that dies with its process), every",
        "record checks itself (round numbers, the run id and a hash of the config in each",
        "metrics row and checkpoint) and is repaired from the checkpoint or reported with the",
        "file and the fix, and every configuration value is checked before anything is",
        "computed or written. The fault matrix below tries each of these on tiny runs",
        "(MNIST-1D at the smoke scale, on the CPU). Regenerate it with:",
        "",
        "```bash",
        *REGENERATE,
        "```",
        "",
        "| category | tried | handled | handled (%) | what counts as handled |",
        "|---|---|---|---|---|",
    ]
    for name, result in report["categories"].items():
        title, rule = CATEGORY_TEXT.get(name, (name, ""))
        share = 100 * result["handled"] / result["tried"] if result["tried"] else 0.0
        lines.append(f"| {title} | {result['tried']} | {result['handled']} | {share:.0f} | {rule} |")
    total_share = 100 * report["handled"] / report["tried"] if report["tried"] else 0.0
    lines.append(f"| **all** | **{report['tried']}** | **{report['handled']}** | **{total_share:.0f}** | |")
    unhandled = [(name, f) for name, r in report["categories"].items() for f in r["failures"]]
    lines += ["", f"Run on {report['date']} with torch {report['torch_version']} and Python {report['python']}, "
              f"{report['seconds']:.0f} s in all."]
    if unhandled:
        lines += ["", "Unhandled cases:", ""] + [f"- {name}: `{failure}`" for name, failure in unhandled]
    lines += [
        "",
        "## Exit statuses of `flcore run`",
        "",
        "| status | meaning |",
        "|---|---|",
        "| 0 | the run finished or diverged; the summary's `status` says which (a divergence is "
        "a result: the round is recorded as `diverged_round`) |",
        "| 1 | an unexpected error during training; the run is marked `failed` with the error |",
        "| 2 | bad input: a configuration value, a config file, missing or malformed data |",
        "| 3 | a damaged or unsafe run record that could not be repaired; the message names the "
        "file and the fix |",
        "| 4 | another process is training the same run and `--no-wait` was given |",
        "| 130 | interrupted (Ctrl-C); the same command resumes from the last checkpoint |",
        "",
        "`flcore runs --verify` re-checks every record (loading checkpoints and final models",
        "too) and exits 3 if any is damaged.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_reliability(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/fault_matrix.json"),
          end="")
