"""The code blocks of a book page that a test runs as written: the files it gives (a block
captioned with the file's path) and its ``commands`` block, run line by line in bash."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```\{code-block\} \w+\n:caption: (?P<caption>\S+)\n\n(?P<body>.*?)```", re.S)


def page_blocks(page: Path) -> dict[str, str]:
    """The page's code blocks by caption (a file's path, written as code so that ``__init__``
    is not read as bold, or ``commands``)."""
    return {m["caption"].strip("`"): m["body"] for m in BLOCK.finditer(page.read_text())}


def write_files(blocks: dict[str, str], folder: Path) -> None:
    """Every block but ``commands`` written to its path under ``folder``."""
    for name, body in blocks.items():
        if name != "commands":
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(body)


def run_commands(commands: str, cwd: Path) -> dict[str, subprocess.CompletedProcess]:
    """Each line of a ``commands`` block in bash, in ``cwd``; an ``export`` line sets the
    environment of the lines after it (``$PWD`` and ``$PYTHONPATH`` expanded).  Every line
    must exit 0."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
           f"{os.environ.get('PATH', '')}", "OMP_NUM_THREADS": "1"}
    env.pop("FLCORE_STORE", None)
    done = {}
    for line in filter(None, (raw.strip() for raw in commands.splitlines())):
        if line.startswith("export "):
            for assignment in line.removeprefix("export ").split():
                name, value = assignment.split("=", 1)
                env[name] = value.replace("$PWD", str(cwd)).replace("$PYTHONPATH", env.get("PYTHONPATH", ""))
            continue
        result = subprocess.run(["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, f"{line}\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        done[line] = result
    return done
