"""The speed probe's seconds on the machine of the benchmark rows: the reference a factor
is taken against (:mod:`flcore.reproduction.calibration`).

What is measured
----------------
:func:`flcore.reproduction.calibration.measure_probe` with the book's workers (one per
core): FedSAM's and FedAvg's small runs, three batched and one alone, 20 rounds, in each
single-threaded worker at once, then a few evaluations of its model.  ``training_s`` is
the probe's seconds less its own evaluations
(:func:`~flcore.reproduction.calibration.probe_evaluation_seconds`) -- what a factor
divides.  Record a row whenever ``sweep_time.jsonl``'s rows of this machine are recorded,
on the same machine and code, so that a factor compares machines and not code versions.

Running it
----------
::

    python benchmarks/probe_time.py --append benchmarks/results/probe_time.jsonl
    python benchmarks/probe_time.py --repeats 3       # the spread of three probes

The rows name the probe's version, the machine, its processor, the workers, the command
and the commit; with ``--repeats`` the row keeps the median.
"""
from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from provenance import emit, git_commit  # noqa: E402  (benchmarks/, the script's folder)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workers", type=int, default=None, help="worker processes (default: one per core)")
    p.add_argument("--repeats", type=int, default=1, help="probes to time; the row keeps the median (default 1)")
    p.add_argument("--append", default=None, help="append the row to this JSON-lines file")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats: a positive integer")

    import torch

    from flcore.cpus import available_cpus
    from flcore.reproduction.calibration import (
        PROBE_VERSION,
        conditions,
        measure_probe,
        probe_evaluation,
        probe_evaluation_seconds,
    )

    workers = args.workers or available_cpus()
    found = [measure_probe(workers) for _ in range(args.repeats)]
    training = [m - probe_evaluation_seconds(probe_evaluation(t, c)) for m, t, c in found]
    for i, ((measured, test_s, client_s), train) in enumerate(zip(found, training)):
        print(f"probe {i + 1}: {measured:.2f} s, {train:.2f} s of training; evaluations {test_s * 1e3:.1f} ms"
              f" (test set), {client_s * 1e3:.1f} ms (clients' data)", flush=True)
    middle = sorted(range(len(found)), key=lambda i: training[i])[len(found) // 2]
    measured, test_s, client_s = found[middle]
    command = "python benchmarks/probe_time.py " + " ".join(argv if argv is not None else sys.argv[1:])
    row = {"probe": PROBE_VERSION, "workers": workers, "training_s": round(training[middle], 3),
           "measured_s": round(measured, 3), "test_eval_s": round(test_s, 5), "client_eval_s": round(client_s, 5),
           "repeats": args.repeats, "spread_s": [round(min(training), 3), round(max(training), 3)],
           "machine": f"CPU, {workers} cores", "processor": conditions(workers)["processor"],
           "torch": torch.__version__,
           "date": datetime.date.today().isoformat(), "commit": git_commit(), "command": command.strip()}
    emit(row, args.append)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
