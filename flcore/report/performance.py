"""The book's Performance page, rendered from the benchmark results file.

``benchmarks/round_time.py --json --append benchmarks/results/round_time.jsonl`` appends
one line per method and machine; ``render_performance(path)`` turns the latest line of
each (method, device, engine, machine) into a Markdown table: rounds per second of flcore
and of the reference loop written like the official code, their ratio (measured in one
run, interleaved), and flcore's seconds per round over the arithmetic floor where it is
known.  Regenerate the page with
``python -m flcore.report.performance benchmarks/results/round_time.jsonl > book/performance.md``;
a test keeps the committed page equal to the rendered one.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

#: FLOPs of one round of the FedSAM paper's CIFAR protocol on its CNN (5 clients x 500
#: images, forward + backward = 3x the forward's 29 MFLOP per image): 220 GFLOP for FedAvg,
#: twice that for FedSAM's two passes.
ROUND_GFLOP = {"fedavg": 220.0, "fedsam": 440.0}
#: Measured float32 matmul rate of a 4096x4096 product on the 2-core CPU the project uses.
CPU_MATMUL_GFLOPS = 380.0


def load_results(path: str | Path) -> list[dict]:
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    latest: dict[tuple, dict] = {}
    for row in rows:
        latest[(row["method"], row["device"], row.get("engine"), row.get("machine"))] = row
    return list(latest.values())


def render_performance(path: str | Path) -> str:
    rows = load_results(path)
    lines = [
        "# Performance",
        "",
        "Rounds per second of the FedSAM paper's CIFAR protocol (its CNN, 5 clients x 500",
        "CIFAR-shaped images per round, batch 64, one local epoch; FedSAM with rho 0.1), for",
        "flcore and for a reference loop written the way the official code works (one client",
        "at a time, a `DataLoader` with per-sample transforms and a model copy per client, the",
        "official layer order). Both run in one process on the same data, their rounds",
        "interleaved, so the ratio is measured in one run. Regenerate with:",
        "",
        "```bash",
        "python benchmarks/round_time.py --json --append benchmarks/results/round_time.jsonl",
        "python -m flcore.report.performance benchmarks/results/round_time.jsonl > book/performance.md",
        "```",
        "",
        "| method | machine | engine | flcore rounds/s | reference rounds/s | ratio | flcore s/round | over the floor | peak memory (MB) | date |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sorted(rows, key=lambda r: (r.get("machine", ""), r["method"])):
        floor = ""
        if r["device"] == "cpu" and r["method"] in ROUND_GFLOP:
            floor_s = ROUND_GFLOP[r["method"]] / CPU_MATMUL_GFLOPS
            floor = f"{r['flcore_s_per_round'] / floor_s:.1f}x"
        memory = r.get("peak_memory_mb")
        lines.append(
            f"| {r['method']} | {r.get('machine', r['device'])} | {r.get('engine', '')} | "
            f"{r['flcore_rounds_per_s']:.3f} | {r['reference_rounds_per_s']:.3f} | {r['ratio']:.2f} | "
            f"{r['flcore_s_per_round']:.2f} | {floor} | {'' if memory is None else f'{memory:.0f}'} | "
            f"{r.get('date', '')} |")
    lines += [
        "",
        "\"Over the floor\" divides flcore's seconds per round by the time the round's FLOPs",
        f"take at the measured matrix-multiply rate of this CPU ({CPU_MATMUL_GFLOPS:.0f} GFLOP/s;",
        "220 GFLOP per FedAvg round, twice that for FedSAM). GPU rows appear when the",
        "benchmark is run on a GPU machine.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_performance(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/round_time.jsonl"), end="")
