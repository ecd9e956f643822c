"""The README's program runs as written (the first python block of bindings/python/README.md)."""

import os
import re
import subprocess
import sys

from conftest import HERE


def test_the_readme_program_runs():
    text = (HERE.parent / "README.md").read_text()
    program = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    path = os.pathsep.join(filter(None, [str(HERE.parent / "src"), os.environ.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=path))
    assert run.returncode == 0, run.stderr
    assert "TRI_ERROR_LAUNCH_ARGS: argument 0 (%x) of kernel @vector_add is ptr<f32>" in run.stdout
