"""This machine's speed against the benchmark rows: measured once, kept in the store with
its digest, ignored when damaged or measured under other conditions; the estimate before
training uses it and orders the groups longest first."""
from __future__ import annotations

import json

import pytest

from flcore.config import resolve_config
from flcore.planning.planner import run_cost
from flcore.reproduction import calibration
from flcore.reproduction.artifacts import RunSpec
from flcore.reproduction.budget import CostModel, DeviceRates
from flcore.reproduction.estimate import Rates, group_seconds, wall_seconds
from flcore.reproduction.estimate_record import RECORD_FILE, append_record, read_records, training_record
from flcore.reproduction.runner import ensure_runs, training_estimate

REFERENCE = DeviceRates("CPU, 2 cores", "cpu", 2,
                        {"mnist1d_cnn": CostModel(alone=0.002, batched=0.001, batched_runs=6)}, ("rows",))
ROWS = {REFERENCE.kind: REFERENCE}


class Probe:
    """A probe that takes ``seconds`` and counts its calls."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.calls = seconds, 0

    def __call__(self, workers) -> float:
        self.calls += 1
        return self.seconds


def test_the_probe_is_priced_by_hand_from_the_rows():
    cfg = resolve_config({**calibration.PROBE_CONFIG, "max_rounds": calibration.PROBE_ROUNDS})
    alone = resolve_config({**calibration.PROBE_ALONE, "max_rounds": calibration.PROBE_ROUNDS})
    # three FedSAM runs and three FedAvg runs in two groups (the rate of a group of three: 0.0016),
    # one FedAvg run at the rate alone (0.002); each run's cost capped at the probe's rounds
    three = 0.002 + (0.001 - 0.002) * 2 / 5
    assert calibration.priced_probe(REFERENCE) == pytest.approx(3 * (run_cost(cfg) + run_cost(alone)) * three
                                                                + run_cost(alone) * 0.002)
    steps = cfg.local_steps or cfg.local_epochs * -(-(cfg.num_samples or 50_000) // cfg.clients // cfg.batch_size)
    assert run_cost(cfg) == calibration.PROBE_ROUNDS * cfg.per_round * steps * 2  # SAM: two gradients a step
    assert run_cost(alone) == calibration.PROBE_ROUNDS * cfg.per_round * steps
    assert [len(g) for g in calibration.probe_groups()] == [3, 3, 1]


def test_the_speed_is_measured_once_then_read_from_the_store(tmp_path):
    priced = calibration.priced_probe(REFERENCE)
    probe = Probe(3 * priced)
    rates, speed = calibration.machine_rates(tmp_path, ROWS, "CPU, 2 cores", 2, measure=probe)
    assert speed.factor == pytest.approx(3) and not speed.cached
    assert rates.models["mnist1d_cnn"].alone == pytest.approx(0.006)
    assert rates.models["mnist1d_cnn"].batched == pytest.approx(0.003)
    again = calibration.machine_speed(tmp_path, ROWS, "CPU, 2 cores", 2, measure=probe)
    assert again.cached and again.factor == pytest.approx(3) and probe.calls == 1
    assert (tmp_path / calibration.SPEED_FILE).is_file()
    assert [p.name for p in tmp_path.iterdir()] == [calibration.SPEED_FILE]  # nothing else written


def test_a_machine_without_rows_of_its_own_starts_from_the_reference(tmp_path):
    probe = Probe(calibration.priced_probe(REFERENCE) / 2)
    rates, speed = calibration.machine_rates(tmp_path, ROWS, "CPU, 16 cores", 16, measure=probe)
    assert rates.kind == "CPU, 16 cores" and rates.workers == 16 and speed.reference == "CPU, 2 cores"
    assert rates.models["mnist1d_cnn"].alone == pytest.approx(0.001)
    assert calibration.machine_rates(tmp_path, {}, "CPU, 2 cores", 2, measure=probe) is None  # no CPU rows


@pytest.mark.parametrize("damage", ["digest", "conditions", "factor", "schema", "link", "huge"])
def test_a_damaged_or_foreign_measurement_is_measured_again(tmp_path, damage):
    priced = calibration.priced_probe(REFERENCE)
    calibration.machine_speed(tmp_path, ROWS, "CPU, 2 cores", 2, measure=Probe(2 * priced))
    path = tmp_path / calibration.SPEED_FILE
    record = json.loads(path.read_text())
    if damage == "digest":
        record["fields"]["factor"] = 0.5  # a hand-edited figure: its digest no longer matches
    elif damage == "conditions":
        record["fields"]["conditions"]["cpus"] += 1
        record["digest"] = calibration._digest(record["fields"])
    elif damage == "factor":
        record["fields"]["factor"] = 1e6
        record["digest"] = calibration._digest(record["fields"])
    elif damage == "schema":
        record = [record]
    if damage == "link":
        target = tmp_path.parent / f"{tmp_path.name}-elsewhere.json"
        target.write_text(json.dumps(record))
        path.unlink()
        path.symlink_to(target)
    elif damage == "huge":
        path.write_text(json.dumps(record) + " " * 10_000)
    else:
        path.write_text(json.dumps(record))
    assert calibration.read_speed(tmp_path, 2) is None
    probe = Probe(4 * priced)
    speed = calibration.machine_speed(tmp_path, ROWS, "CPU, 2 cores", 2, measure=probe)
    assert probe.calls == 1 and speed.factor == pytest.approx(4) and not speed.cached


def test_the_factor_divides_by_the_probe_timed_on_the_rows_machine_when_one_was(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    assert calibration.reference_probe(results, 2) is None  # no file: the rows price the probe
    rows = [{"probe": calibration.PROBE_VERSION, "workers": 2, "training_s": 4.0},
            {"probe": calibration.PROBE_VERSION - 1, "workers": 2, "training_s": 9.0},  # an older probe
            {"probe": calibration.PROBE_VERSION, "workers": 16, "training_s": 1.0},  # other workers
            {"probe": calibration.PROBE_VERSION, "workers": 2, "training_s": 5.0},  # the latest wins
            {"probe": calibration.PROBE_VERSION, "workers": 2, "training_s": -1.0}]  # no measurement
    (results / calibration.PROBE_TIME_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert calibration.reference_probe(results, 2) == 5.0
    assert calibration.reference_probe(results, 16) == 1.0 and calibration.reference_probe(results, 4) is None
    store = tmp_path / "store"
    store.mkdir()
    probe = Probe(7.5)
    rates, speed = calibration.machine_rates(store, ROWS, "CPU, 2 cores", 2, measure=probe, reference_s=5.0)
    assert speed.factor == pytest.approx(1.5) and speed.priced == 5.0
    assert rates.models["mnist1d_cnn"].alone == pytest.approx(0.003)
    # a kept factor taken against another reference is measured again
    again = calibration.machine_speed(store, ROWS, "CPU, 2 cores", 2, measure=probe, reference_s=2.5)
    assert not again.cached and again.factor == pytest.approx(3.0) and probe.calls == 2


def test_a_measurement_that_is_no_measurement_fails_in_one_line(tmp_path):
    with pytest.raises(RuntimeError, match="not a measurement"):
        calibration.machine_speed(tmp_path, ROWS, "CPU, 2 cores", 2, measure=Probe(0.0))
    assert not (tmp_path / calibration.SPEED_FILE).exists()


def _spec(method: str, seed: int) -> RunSpec:
    return RunSpec({"method": method, "seed": seed}, {"method": method, "scale": "smoke", "seed": seed})


def test_group_seconds_by_hand_and_the_wall_time_of_the_schedule():
    rates = REFERENCE
    overrides = {"device": "cpu", "data_root": None, "download": None, "max_rounds": None}
    group = [_spec("fedavg", 0), _spec("fedavg", 1)]
    costs = [run_cost(s.resolve(**overrides)) for s in group]
    rate_of_two = 0.002 + (0.001 - 0.002) / 5  # interpolated between alone and batched-6
    assert group_seconds(group, overrides, {}, rates) == pytest.approx(sum(costs) * rate_of_two)
    rid = group[0].run_id(**overrides)
    cfg = group[0].resolve(**overrides)
    half = cfg.rounds // 2
    partly = group_seconds(group, overrides, {rid: half}, rates)
    assert partly == pytest.approx((run_cost(cfg, half) + costs[1]) * rate_of_two)
    assert wall_seconds([5.0, 4.0, 3.0], 2) == 7.0


def test_ensure_runs_says_the_estimate_then_trains_longest_first_with_the_live_line(tmp_path):
    specs = [_spec("fedsam", 0), _spec("fedavg", 0), _spec("fedsam", 1), _spec("fedavg", 1)]
    rates = Rates(REFERENCE, "test rows")
    before = training_estimate(specs, tmp_path, "cpu", 1, None, rates)
    lines = []
    frame = ensure_runs(specs, store=tmp_path, device="cpu", workers=1, log=lines.append, live=True, rates=rates)
    assert set(frame["status"]) == {"finished"}
    assert lines[0] == before["line"]
    assert before["line"].startswith(f"training 4 run(s) in {before['groups']} group(s) on 1 worker(s): about ")
    # the live line, as plain lines through log (not a terminal): first and last
    assert lines[1].startswith("training: 0/4 runs, 0/") and "1 running" in lines[1]
    assert lines[-2].startswith("training: 4/4 runs, ") and lines[-2].endswith("about 0:00 left")
    # then the time it took against the estimate, kept in the store
    assert lines[-1].startswith("training took ") and lines[-1].endswith(".training-estimates.jsonl")
    [record] = read_records(tmp_path)
    assert record["runs"] == 4 and record["groups"] == before["groups"] and record["workers"] == 1
    assert record["estimate_s"] == pytest.approx(before["seconds"], abs=0.05)
    # measured_s is kept to 0.1 s, the ratio from the unrounded time: they agree to that rounding
    rounding = 0.05 / before["seconds"] + 1e-3
    assert record["ratio"] == pytest.approx(record["measured_s"] / before["seconds"], abs=rounding)
    assert sum(m for _, m in record["group_s"]) == pytest.approx(record["measured_s"], abs=0.5)
    assert record["scales"] == ["smoke"] and record["estimate"] == "test rows"
    # the estimate agrees with itself: nothing is left to train now
    assert training_estimate(specs, tmp_path, "cpu", 1, None, rates)["runs"] == 0


def test_the_groups_are_planned_longest_first_by_their_estimated_seconds(tmp_path):
    from flcore.executors import LocalExecutor
    from flcore.reproduction.runner import missing_runs, plan_training
    from flcore.store import RunStore

    overrides = {"device": "cpu", "data_root": None, "download": None, "max_rounds": None}
    specs = [_spec("fedavg", 0), _spec("fedsam", 0), _spec("fedsam", 1), _spec("fedsam", 2), _spec("fedavg", 1)]
    todo, done = missing_runs(specs, RunStore(tmp_path), overrides)
    groups, seconds = plan_training(todo, done, overrides, "cpu", LocalExecutor(workers=2, device="cpu"),
                                    Rates(REFERENCE, "test rows"))
    assert sum(len(g) for g in groups) == 5
    assert seconds == sorted(seconds, reverse=True)
    assert seconds == [pytest.approx(group_seconds(g, overrides, {}, REFERENCE)) for g in groups]


def test_book_plan_prints_the_estimate_book_prints_before_training_and_writes_nothing(tmp_path, capsys):
    from pathlib import Path

    from flcore.cli.main import main
    from flcore.cpus import available_cpus
    from flcore.reproduction.book_runs import book_specs
    from flcore.reproduction.budget import load_device_rates
    from flcore.reproduction.estimate import this_machine

    root = Path(__file__).resolve().parents[1]
    store = tmp_path / "runs"
    workers = available_cpus()
    # this machine's speed, kept by an earlier build against the probe's reference seconds: the plan measures nothing
    results = root / "benchmarks" / "results"
    reference = calibration.reference_rates(load_device_rates(results), f"CPU, {workers} cores")
    priced = calibration.reference_probe(results, workers) or calibration.priced_probe(reference)
    calibration.write_speed(store, workers, calibration.Speed(1.5, 1.5 * priced, priced, reference.kind,
                                                              cached=False))
    kept = (store / calibration.SPEED_FILE).read_bytes()
    assert main(["book", "--scale", "small", "--plan", "--store", str(store), "--root", str(root),
                 "--device", "cpu"]) == 0
    out = capsys.readouterr().out
    rates = this_machine(root, store, "cpu", workers)
    assert "rows x 1.50, this machine's speed, kept in the store" in rates.note
    # the last book recorded under these rows and probe corrects the estimate, and says so
    assert rates.note.endswith("kept in the store") == (rates.correction == 1.0)
    expected = training_estimate(book_specs("small", root), store, "cpu", None, None, rates)
    assert f"This machine, {expected['line']}" in out.splitlines()
    assert out.rstrip().endswith("Nothing was trained.")
    assert [p.name for p in store.iterdir()] == [calibration.SPEED_FILE]
    assert (store / calibration.SPEED_FILE).read_bytes() == kept


def test_book_plan_json_lists_the_groups_and_the_planned_seeds(tmp_path, capsys):
    import json
    from pathlib import Path

    from flcore.cli.main import main
    from flcore.cpus import available_cpus
    from flcore.reproduction.book_runs import book_specs
    from flcore.reproduction.claims import planned_seed_counts

    root = Path(__file__).resolve().parents[1]
    store = tmp_path / "runs"
    calibration.write_speed(store, available_cpus(), calibration.Speed(1.5, 3.0, 2.0, "CPU, 2 cores", cached=False))
    assert main(["book", "--scale", "small", "--plan", "--json", "--store", str(store), "--root", str(root),
                 "--device", "cpu"]) == 0
    plan = json.loads(capsys.readouterr().out)
    here = plan["this_machine"]
    assert here["runs"] == len(book_specs("small", root)) == sum(g["runs"] for g in here["group_list"])
    assert here["groups"] == len(here["group_list"])
    seconds = [g["seconds"] for g in here["group_list"]]
    assert seconds == sorted(seconds, reverse=True)  # longest first, as they train
    assert all(g["methods"] for g in here["group_list"])
    assert plan["claim_seeds"] == planned_seed_counts("small") and plan["claim_seeds"]["cap"] == 6
    assert int(max(plan["claim_seeds"]["comparisons"], key=int)) == 6


def _small(method: str, seed: int, **values) -> RunSpec:
    return RunSpec({"method": method, "seed": seed},
                   {"method": method, "scale": "small", "dataset": "mnist1d", "seed": seed, **values})


def test_the_probe_s_own_evaluations_are_taken_out_of_the_factor_and_kept_with_it(tmp_path):
    priced = calibration.priced_probe(REFERENCE)
    test_s, client_s = 0.01, 0.04
    # the probe's seven runs stop at round 20 of 300: evaluated at rounds 10 and 20, the test
    # set only (the small scale records no client accuracy by default)
    own = 7 * 2 * test_s
    assert calibration.probe_evaluation_seconds(calibration.probe_evaluation(test_s, client_s)) == pytest.approx(own)
    probe = Probe(0)
    probe.seconds = (3 * priced + own, test_s, client_s)
    speed = calibration.machine_speed(tmp_path, ROWS, "CPU, 2 cores", 2, measure=lambda w: probe.seconds)
    assert speed.factor == pytest.approx(3) and speed.evaluation.test_s == test_s
    again = calibration.machine_speed(tmp_path, ROWS, "CPU, 2 cores", 2, measure=probe)
    assert again.cached and again.factor == pytest.approx(3)
    assert (again.evaluation.test_s, again.evaluation.client_s) == (test_s, client_s)


def test_group_seconds_charge_each_run_s_evaluations_apart_from_its_cost():
    from flcore.reproduction.budget import evaluation_counts

    overrides = {"device": "cpu", "data_root": None, "download": None, "max_rounds": None}
    plain, recording = _small("fedavg", 0), _small("fedavg", 1, client_accuracy=True)
    cfg = plain.resolve(**overrides)
    # 300 rounds: every 10th of the first 200 and every 5th of the last 100 -> 40 test
    # evaluations; the clients' data at every 10th round -> 30 where recorded
    assert evaluation_counts(cfg) == (40, 0)
    assert evaluation_counts(recording.resolve(**overrides)) == (40, 30)
    assert evaluation_counts(cfg, 250) == (10, 0)
    evaluation = calibration.probe_evaluation(0.01, 0.04)
    rate_of_two = 0.002 + (0.001 - 0.002) / 5
    cost = run_cost(cfg)
    assert group_seconds([plain, recording], overrides, {}, REFERENCE, evaluation) == pytest.approx(
        2 * cost * rate_of_two + 40 * 0.01 + (40 * 0.01 + 30 * 0.04))
    # another model or data set is priced by the rows alone
    smoke = _spec("fedavg", 0)
    assert group_seconds([smoke], overrides, {}, REFERENCE, evaluation) == pytest.approx(
        group_seconds([smoke], overrides, {}, REFERENCE))


def test_the_small_book_replayed_on_a_machine_where_evaluations_cost_their_time_is_estimated_within_5_percent():
    """A recorded run list: the small book's groups, each taking its cost at the rows' rate
    times the machine's speed plus its runs' evaluations at a measured time each (times of
    the order measured on the 2-core machine).  The probe measures the same machine; the
    estimate with evaluations charged apart replays it, the factor alone falls short."""
    from pathlib import Path

    from flcore.executors import LocalExecutor
    from flcore.reproduction.book_runs import book_specs
    from flcore.reproduction.budget import evaluation_counts, load_device_rates
    from flcore.reproduction.runner import missing_runs, plan_training
    from flcore.store import RunStore

    root = Path(__file__).resolve().parents[1]
    rows = load_device_rates(root / "benchmarks" / "results")
    reference = calibration.reference_rates(rows, "CPU, 2 cores")
    overrides = {"device": "cpu", "data_root": None, "download": None, "max_rounds": None}
    todo, done = missing_runs(book_specs("small", root), RunStore(root / "no-such-store"), overrides)
    executor = LocalExecutor(workers=2, device="cpu")
    speed, test_s, client_s = 1.3, 0.012, 0.045  # this machine against the rows; one evaluation

    def real_seconds(group) -> float:
        train = group_seconds(group, overrides, {}, reference) * speed
        counts = [evaluation_counts(s.resolve(**overrides)) for s in group]
        return train + sum(t * test_s + c * client_s for t, c in counts)

    def probe(workers):
        evaluation = calibration.probe_evaluation(test_s, client_s)
        return (calibration.priced_probe(reference) * speed + calibration.probe_evaluation_seconds(evaluation),
                test_s, client_s)

    groups, _ = plan_training(todo, done, overrides, "cpu", executor, None)
    measured = wall_seconds(sorted((real_seconds(g) for g in groups), reverse=True), 2)
    estimates = {}
    for name, measure in (("factor alone", lambda w: probe(w)[0]), ("evaluations apart", probe)):
        found = calibration.machine_rates(Path("/nonexistent-store"), rows, "CPU, 2 cores", 2, measure=measure,
                                          keep=False)
        rates = Rates(found[0], name, found[1].evaluation)
        _, seconds = plan_training(todo, done, overrides, "cpu", executor, rates)
        estimates[name] = wall_seconds(seconds, 2)
    assert abs(estimates["evaluations apart"] / measured - 1) < 0.05
    assert measured / estimates["factor alone"] > 1.03  # short by the evaluations' share


def test_the_estimate_records_are_kept_checked_and_bounded(tmp_path, monkeypatch):
    from flcore.reproduction import estimate_record

    fields = training_record([30.0, 20.0, 10.0], [33.0, 24.0, 12.0], 36.0, [4, 2, 1], 2, "rows x 1.00",
                             ["small"], 0.5)
    # by hand: groups of 30, 20, 10 s on two workers end at 30 (30 | 20 + 10)
    assert fields["estimate_s"] == 30.0 and fields["ratio"] == 1.2 and fields["runs"] == 7
    assert fields["group_s"] == [[30.0, 33.0], [20.0, 24.0], [10.0, 12.0]]
    assert fields["machine"] == f"CPU, {len(fields['cpus'])} cores"
    append_record(tmp_path, fields)
    path = tmp_path / RECORD_FILE
    line = path.read_text()
    assert read_records(tmp_path) == [fields]
    # a line whose digest does not match, not JSON, or not of the schema is skipped
    tampered = line.replace('"runs": 7', '"runs": 8')
    path.write_text(tampered + "not json\n" + '{"fields": {}, "digest": "x"}\n' + line)
    assert read_records(tmp_path) == [fields]
    # the file stays bounded: the oldest lines go first
    monkeypatch.setattr(estimate_record, "MAX_RECORD_BYTES", 2 * len(line) + 10)
    path.write_text(line)
    for runs in (1, 2, 3):
        append_record(tmp_path, {**fields, "runs": runs})
    assert [r["runs"] for r in read_records(tmp_path)] == [2, 3]
    # not a regular file: nothing is trusted
    path.unlink()
    path.mkdir()
    assert read_records(tmp_path) == []


def test_the_benchmark_turns_the_store_s_last_record_into_its_row(tmp_path, capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "training_estimate.py"
    spec = importlib.util.spec_from_file_location("training_estimate_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--from-store", str(tmp_path)]) == 2
    assert "holds no recorded estimate" in capsys.readouterr().err
    for runs in (3, 7):
        append_record(tmp_path, training_record([30.0, 20.0, 10.0], [33.0, 24.0, 12.0], 36.0, [runs - 3, 2, 1], 2,
                                                "rows x 1.00", ["small"], 0.5))
    out = tmp_path / "rows.jsonl"
    assert bench.main(["--from-store", str(tmp_path), "--append", str(out)]) == 0
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["runs"] == 7 and row["estimate_s"] == 30.0 and row["measured_s"] == 36.0 and row["ratio"] == 1.2
    assert row["scale"] == "small" and row["command"].endswith("make main") and row["factor"] is None
    assert json.loads(capsys.readouterr().out) == row


def test_the_book_correction_is_the_last_matching_book_s_measured_over_its_raw_estimate(tmp_path):
    from flcore.reproduction.estimate import CORRECTION_BOUNDS, book_correction

    def row(**values):
        return json.dumps({"paper": "book", "scale": "small", "estimate_s": 600.0, "measured_s": 900.0,
                           "correction": 1.0, "calibration": "rows A; probe 3", **values})

    assert book_correction(tmp_path, "rows A; probe 3") == 1.0  # no file
    (tmp_path / "training_estimate.jsonl").write_text("\n".join([
        row(), row(estimate_s=800.0, correction=1.25),  # its raw estimate was 640 s: 900 / 640
        row(calibration="rows B; probe 3", measured_s=60.0),
        json.dumps({"paper": "fedgf", "scale": "small", "estimate_s": 1.0, "measured_s": 9.0})]) + "\n")
    assert book_correction(tmp_path, "rows A; probe 3") == pytest.approx(900 / 640)
    assert book_correction(tmp_path, "rows B; probe 3") == CORRECTION_BOUNDS[0]  # 0.1, a broken record: clamped
    assert book_correction(tmp_path, "rows C; probe 3") == 1.0
