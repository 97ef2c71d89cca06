"""The book's Performance page, rendered from the benchmark results file.

``benchmarks/round_time.py --json --append benchmarks/results/round_time.jsonl`` appends
one line per method, engine and machine; ``render_performance(path)`` turns the latest
line of each (method, device, engine, machine, clients per round) into a Markdown table:
rounds per second of flcore and of the reference loop written like the official code,
their ratios (measured in one run, interleaved), the whole protocol's ratio with its
evaluation schedule, seconds per round over the arithmetic floor and the CUDA peak
memory.  The sweep rows of ``benchmarks/sweep_time.py --json --append
benchmarks/results/sweep_time.jsonl`` (read from the same folder) add a second table: runs
per second of a set of runs trained one at a time and batched; the rows of
``benchmarks/step_ops.py --json --append benchmarks/results/step_ops.jsonl`` a third:
operations per local step, host reads per round, this tree against an earlier commit;
``benchmarks/startup.py --json --append benchmarks/results/startup.jsonl`` a fourth: start-up;
``benchmarks/round_breakdown.py`` a fifth: where a CPU round goes, against the ratio 2.
Regenerate the page with
``python -m flcore.report.performance benchmarks/results/round_time.jsonl > book/performance.md``;
a test keeps the committed page equal to the rendered one.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

REGENERATE = (
    "python benchmarks/round_time.py --json --engine sequential,batched "
    "--append benchmarks/results/round_time.jsonl",
    "python benchmarks/sweep_time.py --json --append benchmarks/results/sweep_time.jsonl",
    "python benchmarks/step_ops.py --compare 62325e6 --clients 10 --samples-per-client 128 --rounds 3 "
    "--repeats 5 --json --append benchmarks/results/step_ops.jsonl",
    "python benchmarks/startup.py --json --append benchmarks/results/startup.jsonl",
    "python benchmarks/round_breakdown.py --json --append benchmarks/results/round_breakdown.jsonl",
    "# on a GPU machine (bash benchmarks/cuda_check.sh OUT runs these with the CUDA tests):",
    "python benchmarks/round_time.py --device cuda --engine batched,batched-eager,sequential --rounds 20 "
    "--warmup 2 --no-retained-reference --json --append benchmarks/results/round_time.jsonl",
    "python benchmarks/gpu_profile.py --json --append benchmarks/results/gpu_profile.jsonl",
    "python -m flcore.report.performance benchmarks/results/round_time.jsonl > book/performance.md",
)


def load_results(path: str | Path) -> list[dict]:
    """The latest result line of each (method, device, engine, machine, clients per round)."""
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    latest: dict[tuple, dict] = {}
    for row in rows:
        key = (row["method"], row["device"], row.get("engine_requested", row.get("engine")), row.get("machine"),
               row.get("clients_per_round"))
        latest[key] = row
    return list(latest.values())


def _engine_label(row: dict) -> str:
    """The engine, and on a GPU whether its local steps replayed from CUDA graphs."""
    engine = row.get("engine", "")
    if row.get("device") != "cuda" or engine != "batched":
        return engine
    return "batched, CUDA graphs" if row.get("cuda_graphs") else "batched, no graphs"


def _num(value, fmt: str, suffix: str = "") -> str:
    return "" if value is None else format(value, fmt) + suffix


def _latest_rows(path: str | Path, key) -> list[dict]:
    """The last row of each ``key(row)`` of a JSON-lines file (none when it is absent), in
    the order each key first appears."""
    latest: dict[tuple, dict] = {}
    for row in _json_lines(path):
        latest[key(row)] = row
    return list(latest.values())


def _json_lines(path: str | Path) -> list[dict]:
    """The rows of a JSON-lines file, in file order (none when it is absent)."""
    path = Path(path)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def load_sweep_results(path: str | Path) -> list[dict]:
    """The latest row of each (engine, device, machine, runs, rounds) of ``sweep_time.jsonl``."""
    return _latest_rows(path, lambda row: (row["engine"], row["device"], row.get("machine"), row["runs"],
                                           row.get("rounds")))


def _heading(title: str) -> list[str]:
    """The lines that open a section of the page (a blank line, the title, a blank line)."""
    return ["", f"## {title}", ""]


def _sweep_section(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    lines = _heading("Sweeps: many runs as one computation") + [
        "Runs per second of the same runs trained one at a time (each run its own simulation,",
        "as `ensure_runs` trained them before run batching) and batched (runs that differ in",
        "seed and alpha share one `[R*K, P]` batch of clients, `flcore.sim.multi_run`), each",
        "way in its own process in one invocation of `benchmarks/sweep_time.py`. The CPU set:",
        "24 `small` runs (MNIST-1D CNN, 100 clients, 5 per round, with the evaluation",
        "schedule), FedAvg and FedSAM x alpha {0, 0.5, 1000} x 4 seeds, on one single-threaded",
        "worker per core.",
        "",
        "| engine | machine | runs | rounds | workers | runs/s | ratio | seconds | gradient ms per client-step "
        "| gradient ratio | gradient share | ratio ceiling | peak memory (MB) | date |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    order = lambda r: (r.get("machine", ""), r["runs"], r.get("rounds", 0), r["engine"] != "one-at-a-time")  # noqa: E731
    for r in sorted(rows, key=order):
        lines.append(
            f"| {r['engine']} | {r.get('machine', r['device'])} | {r['runs']} | {r.get('rounds', '')} | "
            f"{r.get('workers', '')} | {r['runs_per_s']:.4f} | {r['ratio']:.2f} | {_num(r.get('seconds'), '.0f')} | "
            f"{_num(r.get('gradient_ms_per_client_step'), '.3f')} | {_num(r.get('gradient_ratio'), '.2f')} | "
            f"{_num(r.get('gradient_share'), '.0%')} | {_num(r.get('ratio_ceiling'), '.2f')} | "
            f"{_num(r.get('peak_memory_mb'), '.0f')} | {r.get('date', '')} |")
    lines += [
        "",
        "- **ratio**: runs per second over the one-at-a-time runs per second of the same invocation.",
        "- **gradient ms per client-step**: one client's minibatch gradient on the path that way",
        "  trains with (one client at a time; all clients of the largest group under `vmap`), timed",
        "  alone in a single-threaded process; **gradient ratio**: the one-at-a-time time over it.",
        "- **gradient share**: the fraction of the way's wall time its gradients take (the runs'",
        "  gradient evaluations times the kernel time, over the workers). **ratio ceiling**: the",
        "  one-at-a-time wall time over this way's gradient time alone, the ratio it would reach if",
        "  everything else took no time. Both ways compute the same gradients; batching removes",
        "  the rest (per-step overhead) and runs the kernels on larger operands. On two CPU cores",
        "  the batched small sweep spends about 90% of its time in the MNIST-1D CNN's `conv1d`",
        "  and its backward, so its ratio sits just under a ceiling of about 2.5x: 5x would need",
        "  a gradient kernel twice as fast, not less overhead.",
        "- The GPU case (`--gpu`: 32 CIFAR-10 CNN paper-protocol runs of 100 rounds, with the",
        "  peak CUDA memory) appears when the benchmark is run on a GPU machine.",
    ]
    return lines


def load_step_results(path: str | Path) -> list[dict]:
    """The latest row of each (method, engine, device, machine, implementation) of
    ``step_ops.jsonl``, in file order."""
    return _latest_rows(path, lambda row: (row["method"], row["engine"], row["device"], row.get("machine"),
                                           row["implementation"]))


def _step_section(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    lines = _heading("Operations per local step") + [
        "What a GPU waits on between kernels: the aten operations one local step dispatches",
        "(each at least one kernel launch on a GPU, counted with a `TorchDispatchMode`), the",
        "tensor reads back to the host during one round and how many of them fall inside the",
        "local steps, and the seconds per round of this tree and of an earlier commit",
        "(`benchmarks/step_ops.py --compare REV`: each in its own process, passes interleaved,",
        "the best pass; the protocol of the table above, shrunk to the clients and samples per",
        "client given, which changes the number of steps, not a step). On the CPU the reads",
        "include those of host tensors (the round's draws are made on the host by design).",
        "Seconds per round are only comparable within one invocation; on a shared machine",
        "(load at start far above its cores) they are many times an idle machine's.",
        "",
        "| method | engine | machine | implementation | clients x samples | ops per step "
        "| host reads per round | in local steps | s/round | speed-up vs baseline | load at start | date |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['method']} | {r['engine']} | {r.get('machine', r['device'])} | {r['implementation']} | "
            f"{r.get('clients', '')} x {r.get('samples_per_client', '')} | {r['ops_per_step']} | "
            f"{r['host_reads_per_round']} | {r['host_reads_in_steps']} | {r['s_per_round']:.2f} | "
            f"{_num(r.get('speedup_vs_baseline'), '.2f', 'x')} | {_num(r.get('load_average_at_start'), '.1f')} | "
            f"{r.get('date', '')} |"
        )
    return lines


def load_breakdown_rows(path: str | Path) -> list[dict]:
    """The latest row of each (method, machine) of ``round_breakdown.jsonl``."""
    return _latest_rows(path, lambda row: (row["method"], row.get("machine")))


def _breakdown_section(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    lines = _heading("Where a CPU round goes") + [
        "One round of the table's protocol split by operation (`benchmarks/round_breakdown.py`:",
        "self times under `torch.profiler`, scaled to the unprofiled round), with the round",
        "that would make flcore twice as fast as the reference measured in the same run and",
        "what that leaves for everything but the convolutions. The convolution kernels are",
        "oneDNN's, the same in both implementations. Where the remainder is smaller than what",
        "the pooling and linear layers alone take, a ratio of 2 needs faster convolution",
        "kernels than the machine's library has, not less work around them.",
        "",
        "| method | machine | flcore s/round | reference s/round | ratio | convolutions s (GFLOP/s) "
        "| their floor s | pooling s | linear s | other s | round for 2x s | left for the rest s | commit | date |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['method']} | {r.get('machine', r['device'])} | {r['flcore_s_per_round']:.3f} | "
            f"{r['reference_s_per_round']:.3f} | {r['ratio']:.2f} | {r['convolution_s']:.3f} "
            f"({_num(r.get('conv_gflops_achieved'), '.0f')}) | {r['conv_floor_s']:.3f} | {r['pooling_s']:.3f} | "
            f"{r['linear_s']:.3f} | {r['other_s']:.3f} | {r['round_for_2x_s']:.3f} | "
            f"{r['left_for_the_rest_s']:.3f} | {r.get('commit') or ''} | {r.get('date', '')} |"
        )
    return lines


def load_gpu_rows(path: str | Path) -> list[dict]:
    """The rows of ``gpu_profile.jsonl`` (none when the file is absent)."""
    return _json_lines(path)


def _graphs(row: dict) -> str:
    if row.get("cuda_graphs"):
        return "yes"
    reason = row.get("cuda_graphs_off_reason") or ""
    return "off" if reason == "FLCORE_CUDA_GRAPHS=0" else f"no ({reason.split(':')[0][:60]})"


def _largest_kernel(row: dict) -> str:
    kernels = row.get("top_kernels") or []
    if not kernels or not row.get("gpu_kernel_s_per_round"):
        return ""
    top = kernels[0]
    name = top["name"].replace("void ", "").split("<")[0].split("(")[0].split("::")[-1]
    return f"`{name}` ({top['ms_per_round'] / 1e3 / row['gpu_kernel_s_per_round']:.0%})"


#: What the GPU rows were measured to say (see the tables above them).
GPU_FINDINGS = (
    "- With CUDA graphs the host no longer bounds a round at 5 clients: the GPU is busy most of",
    "  it, and one graph launch replaces each step's thousand-odd kernel launches. The kernels",
    "  themselves bound it now, led by cuDNN's layout transposes (`genericTranspose`) around the",
    "  grouped convolution that `vmap` over clients produces. Next lever: inputs and weights in",
    "  channels-last layout, or a convolution with per-client weights that needs no transpose.",
    "- From 100 clients on a graph gains nothing (the GPU bounds the step) and its memory pool",
    "  costs memory: chunks of more than 64 clients run eagerly (the 100-client rows were",
    "  measured before that limit, and set it). At 1,000 clients the capture ran out of memory,",
    "  the run went on eagerly and halved its chunk. At 20 clients the check at capture found",
    "  the replayed step off the eager one by more than its tolerance, and the run went on",
    "  eagerly; why is not established yet.",
    "- **The default precision stays fp32.** tf32 and bf16 are faster and their trajectories",
    "  stay close here, but these data are synthetic and every precision reaches 100 % test",
    "  accuracy by round 100, so they cannot tell whether a precision changes a CIFAR-10",
    "  result: a stand-in does not decide that. `--precision bf16` serves previews; the run id",
    "  records it.",
)


def _gpu_section(rows: list[dict]) -> list[str]:
    """Busy fraction, clients per round and precision on a GPU (``benchmarks/gpu_profile.py``)."""
    if not rows:
        return []
    lines = _heading("On a GPU: what bounds a round") + [
        "`benchmarks/gpu_profile.py` on the protocol above (5 of 100 clients of 500 images).",
        "The local step of the batched engine is captured as a CUDA graph and replayed",
        "(`flcore.sim.cuda_graphs`: checked against the eager step when captured, eager where a",
        "step reads the round number or a chunk has more than 64 clients; `FLCORE_CUDA_GRAPHS=0`",
        "turns graphs off). *GPU busy* is the union of the kernels' intervals over wall time",
        "under `torch.profiler`.", "",
        "| method | machine | CUDA graphs | s/round | GPU s/round | GPU busy | kernel launches/round "
        "| graph launches/round | largest kernel (share of GPU time) | date |",
        "|---|---|---|---|---|---|---|---|---|---|"]
    for r in (r for r in rows if r["part"] == "profile"):
        lines.append(f"| {r['method']} | {r['machine']} | {_graphs(r)} | {r['s_per_round']:.4f} | "
                     f"{r['gpu_kernel_s_per_round']:.4f} | {r['gpu_busy_fraction']:.0%} | "
                     f"{r['kernel_launches_per_round']:.0f} | {r['graph_launches_per_round']:.0f} | "
                     f"{_largest_kernel(r)} | {r['date']} |")
    clients = [r for r in rows if r["part"] == "clients"]
    if clients:
        lines += ["", "FedSAM at more clients per round (the whole round batched; a chunk that does not fit",
                  "is halved and the run goes on):", "",
                  "| clients/round | samples/client | machine | CUDA graphs | s/round | peak memory (MB) "
                  "| clients per computation | date |", "|---|---|---|---|---|---|---|---|"]
        for r in clients:
            lines.append(f"| {r['clients_per_round']:,} | {r['samples_per_client']} | {r['machine']} | {_graphs(r)} | "
                         f"{r['s_per_round']:.3f} | {_num(r.get('peak_memory_mb'), ',.0f')} | "
                         f"{r.get('chunk_size') or r['clients_per_round']:,} | {r['date']} |")
    precision = [r for r in rows if r["part"] == "precision"]
    if precision:
        marks = [c["round"] for c in precision[0]["curve"]]
        lines += ["", f"Precision (the config field `precision`): FedSAM from one seed for "
                  f"{precision[0]['rounds']} rounds in each. *Distance* is how far the final weights lie",
                  "from the fp32 run's, over how far the fp32 run moved from its start.", "",
                  "| precision | machine | s/round | distance to fp32 | "
                  + " | ".join(f"accuracy at {m}" for m in marks) + " | date |",
                  "|---|---|---|---|" + "---|" * len(marks) + "---|"]
        for r in precision:
            accs = " | ".join(f"{c['test_accuracy']:.4f}" for c in r["curve"])
            lines.append(f"| {r['precision']} | {r['machine']} | {r['s_per_round']:.4f} | "
                         f"{_num(r.get('relative_distance_to_fp32'), '.1%')} | {accs} | {r['date']} |")
    return lines + ["", *GPU_FINDINGS]


def load_startup_results(path: str | Path) -> list[dict]:
    """The rows of ``startup.jsonl``, in file order."""
    return _json_lines(path)


def _startup_section(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    lines = _heading("Start-up") + [
        "Seconds from a fresh process's `import flcore` to the first round of a paper-scale",
        "CIFAR-10 FedSAM run (`benchmarks/startup.py`: 50,000 + 10,000 synthetic images in",
        "torchvision's format). The first process decodes the files into the cache of decoded",
        "arrays (`cold`); the next ones read that cache (`warm`). *After import* is data plus",
        "simulation: how long after the import training starts (target: 3 s on a warm cache).",
        "",
        "| cache | machine | images | import (s) | data (s) | simulation (s) | after import (s) "
        "| import to first round (s) | first round (s) | date |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['cache']} | {r.get('machine', r['device'])} | {r['num_train']:,} | {r['import_s']:.2f} | "
            f"{r['data_s']:.2f} | {r['simulation_s']:.2f} | {r['data_s'] + r['simulation_s']:.2f} | "
            f"{r['to_first_round_s']:.2f} | {r['first_round_s']:.2f} | {r.get('date', '')} |"
        )
    return lines


def render_performance(path: str | Path, sweeps: str | Path | None = None, steps: str | Path | None = None,
                       startup: str | Path | None = None) -> str:
    """The page; ``sweeps``, ``steps`` and ``startup`` default to ``sweep_time.jsonl``,
    ``step_ops.jsonl`` and ``startup.jsonl`` beside ``path``."""
    sweep_rows = load_sweep_results(sweeps if sweeps is not None else Path(path).with_name("sweep_time.jsonl"))
    step_rows = load_step_results(steps if steps is not None else Path(path).with_name("step_ops.jsonl"))
    startup_rows = load_startup_results(startup if startup is not None else Path(path).with_name("startup.jsonl"))
    rows = sorted(load_results(path), key=lambda r: (r.get("machine", ""), r.get("clients_per_round", 0),
                                                      r["method"], r.get("engine", "")))
    lines = [
        "# Performance",
        "",
        "Speed of the FedSAM paper's CIFAR-10 protocol (its CNN, 5 of 100 clients of 500",
        "CIFAR-shaped images per round, batch 64, one local epoch; FedSAM with rho 0.1) in",
        "flcore and in a reference loop written the way the official code works (one client",
        "at a time, a `DataLoader` with per-sample transforms per client, the official layer",
        "order and evaluation). Each implementation runs in its own process, their rounds",
        "interleaved, so every ratio comes from one run. Regenerate with:",
        "",
        "```bash",
        *REGENERATE,
        "```",
        "",
        "| method | machine | clients/round | engine | flcore rounds/s | reference rounds/s | ratio "
        "| ratio, reference with retained memory | whole protocol ratio | flcore s/round "
        "| over the floor | peak memory (MB) | date |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['method']} | {r.get('machine', r['device'])} | {r.get('clients_per_round', '')} | "
            f"{_engine_label(r)} | {r['flcore_rounds_per_s']:.3f} | "
            f"{_num(r.get('reference_rounds_per_s'), '.3f')} | "
            f"{_num(r.get('ratio'), '.2f')} | {_num(r.get('ratio_vs_retained_reference'), '.2f')} | "
            f"{_num(r.get('protocol_ratio'), '.2f')} | {r['flcore_s_per_round']:.2f} | "
            f"{_num(r.get('over_floor'), '.1f', 'x')} | {_num(r.get('peak_memory_mb'), '.0f')} | "
            f"{r.get('date', '')} |"
        )
    lines += [
        "",
        "- **ratio**: flcore's rounds per second over the reference's, training rounds only",
        "  (local training of the sampled clients and the server average).",
        "- **ratio, reference with retained memory**: the same against the reference run with",
        "  the memory setting flcore's simulation applies to its own process on Linux (freed",
        "  memory stays in the heap instead of being faulted in again by every step, see",
        "  `flcore.sim.cpu_memory`); the gap between the two ratios is what that setting is",
        "  worth on the machine.",
        "- **whole protocol ratio**: 10,000 rounds with the papers' evaluation schedule (every",
        "  100 rounds and every round of the last 100: 199 evaluations of the 10,000 test",
        "  images), composed from the measured round and evaluation times. flcore evaluates",
        "  the test set and, every 100 rounds, the per-client training accuracy; the official",
        "  code evaluates every client's training data and the test set at each evaluation.",
        "- **over the floor**: flcore's seconds per round over the round's FLOPs (counted",
        "  with `torch.utils.flop_counter`: 202 GFLOP per FedAvg round, twice that for",
        "  FedSAM) at the best float32 rate measured on the machine in the same run (a large",
        "  matrix product or 3x3 convolution).",
        "- **peak memory**: flcore's CUDA maximum allocated memory over the timed rounds",
        "  (empty on CPUs).",
        "",
        "`benchmarks/README.md` describes every field of the results file. GPU rows appear",
        "when the benchmark is run on a GPU machine.",
    ]
    lines += _sweep_section(sweep_rows)
    lines += _step_section(step_rows)
    lines += _startup_section(startup_rows)
    lines += _breakdown_section(load_breakdown_rows(Path(path).with_name("round_breakdown.jsonl")))
    lines += _gpu_section(load_gpu_rows(Path(path).with_name("gpu_profile.jsonl")))
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_performance(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/round_time.jsonl"), end="")
