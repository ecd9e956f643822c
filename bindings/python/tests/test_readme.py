"""The README's programs run as written: the first python block of bindings/python/README.md,
and the host-team example of its "Teams" section."""

import os
import re
import subprocess
import sys

from conftest import HERE


def run_block(pattern: str) -> subprocess.CompletedProcess:
    text = (HERE.parent / "README.md").read_text()
    program = re.search(pattern, text, re.S).group(1)
    path = os.pathsep.join(filter(None, [str(HERE.parent / "src"), os.environ.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=path))
    assert run.returncode == 0, run.stderr
    return run


def test_the_readme_program_runs():
    run = run_block(r"```python\n(.*?)```")
    assert "TRI_ERROR_LAUNCH_ARGS: argument 0 (%x) of kernel @vector_add is ptr<f32>" in run.stdout


def test_the_readme_team_example_runs():
    run = run_block(r"## Teams\n.*?```python\n(.*?)```")
    assert run.stdout.splitlines() == ["TRI_ERROR_INVALID_ARGUMENT: tri_team_ptr: rank 4, but the team has 4 ranks",
                                       "every rank got its neighbour's block"]
