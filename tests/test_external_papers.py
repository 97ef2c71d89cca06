"""A package named in $FLCORE_PAPERS that cannot be registered (missing, raising, a syntax error,
an id a built-in paper has) no longer breaks ``import flcore``: ``flcore --help`` works, and
every command refuses to run with one line naming the package and what went wrong."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "raises": "raise RuntimeError('boom')\n",
    "syntax": "def broken(:\n",
    "collides": ("from pathlib import Path\nfrom flcore.reproduction.papers import register_paper\n"
                 "(Path(__file__).parent / 'paper.yaml').write_text('title: T\\n')\n"
                 "register_paper('fedsam', 'Again', Path(__file__).parent)\n"),
    "escapes": ("from pathlib import Path\nfrom flcore.reproduction.papers import register_paper\n"
                "(Path(__file__).parent / 'paper.yaml').write_text('title: T\\n')\n"
                "register_paper('../../../escape12', 'Out', Path(__file__).parent)\n"),
}


def _flcore(tmp_path, package, *argv):
    for name, code in PACKAGES.items():
        (tmp_path / name).mkdir(exist_ok=True)
        (tmp_path / name / "__init__.py").write_text(code)
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{ROOT}", "FLCORE_PAPERS": package}
    return subprocess.run([sys.executable, "-m", "flcore", *argv], capture_output=True, text=True, cwd=tmp_path,
                          env=env, timeout=300)


@pytest.mark.parametrize("package,says", [("raises", "RuntimeError: boom"), ("syntax", "SyntaxError"),
                                          ("collides", "registered twice"), ("escapes", "must match"),
                                          ("not_there", "No module named 'not_there'")])
def test_a_paper_package_that_cannot_be_registered_is_one_line(tmp_path, package, says):
    assert _flcore(tmp_path, package, "--help").returncode == 0
    done = _flcore(tmp_path, package, "runs", "--store", str(tmp_path / "store"))
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith(f"flcore: error: $FLCORE_PAPERS names the package '{package}'") and says in lines[0]
    assert not (tmp_path / "store").exists() and not (tmp_path.parent / "escape12").exists()
