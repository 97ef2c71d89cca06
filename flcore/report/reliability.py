"""The book's Reliability page, rendered from the fault matrix's JSON output.

``python benchmarks/fault_matrix.py --json > benchmarks/results/fault_matrix.json`` tries
every fault (bad configurations, kills, store corruptions, data faults, concurrent runs,
poisoned files, links and special files, trust without proof, records of the wrong shape,
interruption, read-only stores, unbounded inputs, crafted results bundles and archives,
text from a bundle on a page, split files, failures beside other work, a full disk) and
counts how many were handled;
``render_reliability(path)`` turns that file into the page.  Regenerate it with
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
    "links_and_special_files": ("Links and special files in a store",
                                "a link (to a file or folder outside, to `/dev/zero`), a FIFO, a hard link or a "
                                "directory where a record belongs: every listing ends, marks the run and lists "
                                "the others; `flcore run` returns the right numbers or exits 3; nothing outside "
                                "the store changes"),
    "trust_without_proof": ("Trust without proof",
                            "a flipped bit, another run's tensor file or `files.json`, a checkpoint without its "
                            "stamp, an edited `config.json`, a replaced data cache: `runs --verify` exits 3, "
                            "`flcore run` never exits 0 with other numbers, an analysis refuses the file, a cache "
                            "is rebuilt"),
    "listing_records": ("One record of the wrong shape",
                        "valid JSON of the wrong type, range, size or depth (`[1, 2]`, `\"ok\"`, 10^12 rounds, "
                        "100,000 brackets): every listing ends at once and lists every run, the damaged one "
                        "marked"),
    "interruption": ("Interruption",
                     "SIGTERM, SIGHUP and Ctrl-C to `flcore run` and `flcore sweep --workers 2`, a run left "
                     "`running` by a killed process, a signal while a notebook executes: exit 128 + the signal "
                     "with one line, workers stopped, runs interrupted with no lock held, the rerun equal to an "
                     "uninterrupted run, the page as it was"),
    "read_only_stores": ("Read-only stores",
                         "a store mounted read-only: `run`, `sweep`, `runs --verify` and `analyze` of finished "
                         "runs answer; a run that needs training exits 2 with one line"),
    "unbounded_inputs": ("Unbounded or ambiguous inputs",
                         "YAML alias bombs, keys given twice, two spellings of a field, YAML 1.1 numbers, huge "
                         "values, grids and counts, a FIFO as a config, options out of range: exit 2 with one "
                         "bounded line within seconds, nothing written; `-0` and `0` one run id"),
    "bundle_content": ("Bundles the store would never write",
                       "a results bundle with every digest right whose run is not one flcore writes: a final "
                       "model that is NaN, of another dtype or shape or another model's tensors, a config flcore "
                       "does not accept or does not write, another scale than the manifest's, rounds, status, "
                       "summary or log that disagree: `bundle import` exits 2 with one line naming the run and "
                       "the member, the store unchanged"),
    "bundle_archives": ("Broken or odd archives",
                        "a bundle cut anywhere or without its end blocks, a member declared 2 GB and cut short, "
                        "names with a backslash, NUL, control or non-ASCII characters, compressed or foreign files, "
                        "I/O errors: exit 2 with one line, no traceback, nothing written"),
    "page_injection": ("Text from a bundle on a page",
                       "provenance fields holding Markdown, HTML or `<script>`: the page's note shows each as "
                       "text and gains no element"),
    "split_files": ("Split files",
                    "one image named twice (`img_0001_label_3.png` and `img_1_label_3.png`; a CIFAR-100 name in "
                    "another case or form), within a user or across users, and malformed files: `flcore run` "
                    "exits 2 with one line naming both entries, before anything is written"),
    "failure_cleanup": ("Failures beside other work",
                        "a failing or refused import beside a good one into a new store, an import killed while "
                        "staging: the good run stays intact, nothing but runs is listed, a killed import's "
                        "staging folder is removed by the next import and a live one never"),
    "disk_full": ("A full disk",
                  "`ENOSPC` at each file a run writes: one line naming the file, exit 3 during training (2 "
                  "before it), and the same command, once space is free, ends equal to an uninterrupted run"),
    "command_limits": ("The command line's limits",
                       "`--workers` above the CPUs, `--max-rounds` above the configs' cap, a `$FLCORE_MAX_ROUNDS` "
                       "that is no positive integer, `--store` naming a file (every command): one line, exit 2, "
                       "nothing written; a closed standard output: exit 141, no traceback"),
    "book_files": ("The book's configuration files",
                   "a `_config.yml` that is not YAML, not a mapping or names no GitHub repository, a `_toc.yml` "
                   "that is a link, lacks the papers' part or holds a user's chapter in it: one line, exit 2, "
                   "before any run trains or page is written, the link's target untouched"),
    "paper_text": ("Text from a paper's files",
                   "a claim text, a later claim's citation, quote and URL holding markup, rendered by a CommonMark "
                   "parser: no tag, no link of its own, no extra table cell; a paper id that is a path refused; a "
                   "package in `$FLCORE_PAPERS` that cannot be registered: `--help` works, every command one "
                   "line, exit 2"),
    "verdict_caches": ("Caches a verdict reads",
                       "a run's analysis cache edited after it was written is never read and `flcore runs "
                       "--verify` names it; a decoded data entry that is not data (its digest recomputed) is "
                       "ignored with one warning and decoded again; a split file with a key given twice refused"),
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
    commit = (f"on commit `{report['commit']}`" if report.get("commit")
              else "on a commit it did not record (the matrix records its commit since; rerun to name it)")
    lines += ["", f"Run {commit}, on {report['date']} with torch {report['torch_version']} and Python "
              f"{report['python']}, {report['seconds']:.0f} s in all."]
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
        "file and the fix; or the disk filled up during training (the run resumes from its last checkpoint) |",
        "| 4 | another process is training the same run and `--no-wait` was given |",
        "| 2 (store) | the run must be trained or repaired but its store cannot be written "
        "(a read-only store answers lookups of finished runs) |",
        "| 130, 143, 129 | interrupted by Ctrl-C, SIGTERM or SIGHUP; the runs are marked "
        "interrupted and the same command resumes from the last checkpoint |",
        "",
        "`flcore runs --verify` re-checks every record (every tensor file against the SHA-256",
        "that `files.json` records for it, then loading it) and exits 3 if any is damaged.",
        "`flcore runs --adopt RUN_ID` records the digests of a run written before digests",
        "were kept, once you trust its files.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_reliability(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/fault_matrix.json"),
          end="")
