"""Flower's supported launcher on one machine: a SuperLink and one SuperNode per client, all
on 127.0.0.1, and ``flwr run`` submitting an app (:mod:`flcore.flower.app`) to them.

:func:`local_deployment` starts the SuperLink (``flower-superlink --insecure``) and the
SuperNodes (``flower-supernode --node-config partition-id=K``), each in its own process
group on a free port of 127.0.0.1, with Flower's home (``FLWR_HOME``: its configuration,
the installed apps, the SuperLink's database and every log) in a folder of its own; it
stops them all, the processes they started included, when the block ends, even on an
error or Ctrl-C.  :func:`flwr_run` runs ``flwr run <app> <connection> --stream`` against it
and returns when the run ends.

The same by hand, in three terminals (``FLWR_HOME`` naming a folder whose ``config.toml``
has the connection ``[superlink.local-deployment]`` with ``address = "127.0.0.1:9100"``
and ``insecure = true``)::

    flower-superlink --insecure --host 127.0.0.1 --port 9100
    flower-supernode --insecure --superlink 127.0.0.1:9100 --port 9101 --node-config "partition-id=0"
    ...  (one per client)
    flwr run <app folder> local-deployment --stream
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: The name of the SuperLink connection written into the deployment's Flower home.
CONNECTION = "local-deployment"
#: How long the SuperLink may take to listen (seconds).
START_TIMEOUT_S = 60
#: How long a stopped process may take to exit before it is killed (seconds).
STOP_TIMEOUT_S = 10
#: How much of a log a failure quotes (characters).
LOG_TAIL = 3000


def _executable(name: str) -> str:
    """A Flower command of this Python's environment (beside the interpreter), else on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.is_file() else shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} not found: install Flower (pip install \"flcore[flower]\")")
    return found


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _tail(path: Path) -> str:
    try:
        return path.read_text(errors="replace")[-LOG_TAIL:]
    except OSError:
        return ""


@dataclass
class Deployment:
    """A running SuperLink and its SuperNodes: ``home`` (``FLWR_HOME``), ``connection`` (the
    name ``flwr run`` takes), ``env`` (the environment to run Flower's commands in),
    ``address`` of the SuperLink, ``processes`` with their log files."""

    home: Path
    address: str
    env: dict[str, str]
    connection: str = CONNECTION
    processes: list[tuple[subprocess.Popen, Path]] = field(default_factory=list)

    def start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log = self.home / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       env=self.env, cwd=self.home, start_new_session=True)
        self.processes.append((process, log))
        return process

    def check_alive(self) -> None:
        for process, log in self.processes:
            if process.poll() is not None:
                raise RuntimeError(f"{Path(process.args[0]).name} exited with {process.returncode}; its log "
                                   f"({log}) ends:\n{_tail(log)}")

    def stop(self) -> None:
        """Stop every process and every process it started (SuperLink and SuperNode start
        Flower's SuperExec and apps detached, in sessions of their own): TERM, then KILL
        what is left after :data:`STOP_TIMEOUT_S`."""
        import psutil

        family = []
        for process, _ in self.processes:
            with contextlib.suppress(psutil.Error):
                top = psutil.Process(process.pid)
                family += [*top.children(recursive=True), top]
        for member in family:
            with contextlib.suppress(psutil.Error):
                member.terminate()
        _, alive = psutil.wait_procs(family, timeout=STOP_TIMEOUT_S)
        for member in alive:
            with contextlib.suppress(psutil.Error):
                member.kill()
        psutil.wait_procs(alive, timeout=STOP_TIMEOUT_S)
        for process, _ in self.processes:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=STOP_TIMEOUT_S)


def _wait_listening(deployment: Deployment, port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        deployment.check_alive()
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"the SuperLink did not listen on 127.0.0.1:{port} within {START_TIMEOUT_S} s")


@contextlib.contextmanager
def local_deployment(clients: int, home: str | Path | None = None) -> Iterator[Deployment]:
    """A SuperLink and ``clients`` SuperNodes (clients ``0..clients-1``) on 127.0.0.1, stopped
    when the block ends.  ``home``: Flower's home (default: a temporary folder, removed)."""
    if isinstance(clients, bool) or not isinstance(clients, int) or clients < 1:
        raise ValueError(f"clients: a whole number of SuperNodes, at least 1, got {clients!r}")
    with contextlib.ExitStack() as stack:
        if home is None:
            home = stack.enter_context(tempfile.TemporaryDirectory(prefix="flcore-flwr-"))
        home = Path(home)
        home.mkdir(parents=True, exist_ok=True)
        port = free_port()
        (home / "config.toml").write_text(f'[superlink]\ndefault = "{CONNECTION}"\n\n[superlink.{CONNECTION}]\n'
                                          f'address = "127.0.0.1:{port}"\ninsecure = true\n')
        # Flower's processes start their helpers (flower-superexec, flwr-serverapp) by name
        path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
        env = {**os.environ, "FLWR_HOME": str(home), "FLWR_DISABLE_UPDATE_CHECK": "1", "PATH": path}
        deployment = Deployment(home=home, address=f"127.0.0.1:{port}", env=env)
        stack.callback(deployment.stop)
        deployment.start("superlink", [_executable("flower-superlink"), "--insecure", "--host", "127.0.0.1",
                                       "--port", str(port), "--database", str(home / "superlink.db")])
        _wait_listening(deployment, port)
        for client in range(clients):
            deployment.start(f"supernode-{client}", [
                _executable("flower-supernode"), "--insecure", "--superlink", deployment.address,
                "--host", "127.0.0.1", "--port", str(free_port()), "--node-config", f"partition-id={client}"])
        yield deployment


#: How ``flwr run --stream`` names the run it started.
RUN_ID = re.compile(r"run_id `(\d+)`")


def flwr_run(app: str | Path, deployment: Deployment, timeout: float = 3600) -> dict:
    """``flwr run <app> <connection> --stream`` against ``deployment``; returns when the run
    ends: ``{"run_id", "status", "log"}``.  ``flwr run`` exits 0 even when the app failed,
    so the run's status is asked of the SuperLink (``flwr ls --run-id``); a run that did not
    complete raises with Flower's reason."""
    deployment.check_alive()
    flwr = _executable("flwr")
    try:
        done = subprocess.run([flwr, "run", str(app), deployment.connection, "--stream"], env=deployment.env,
                              capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"flwr run did not end within {timeout:g} s") from None
    log = done.stdout + done.stderr
    found = RUN_ID.search(log)
    if done.returncode != 0 or found is None:
        raise RuntimeError(f"flwr run exited with {done.returncode} and started no run:\n{log[-LOG_TAIL:]}")
    listed = subprocess.run([flwr, "ls", deployment.connection, "--run-id", found[1], "--format", "json"],
                            env=deployment.env, capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    try:
        run = json.loads(listed.stdout)["runs"][0]
    except (ValueError, KeyError, IndexError):
        raise RuntimeError(f"flwr ls could not say how run {found[1]} ended:\n{listed.stderr[-LOG_TAIL:]}") from None
    if run.get("status") != "finished:completed":
        details = " ".join(str(run.get("status-details") or "").split())[:LOG_TAIL]
        raise RuntimeError(f"Flower run {found[1]} {run.get('status')}: {details}")
    return {"run_id": found[1], "status": run["status"], "log": log}
