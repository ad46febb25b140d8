"""The README's Python examples run, and print what their comments say."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_examples_run_and_print_what_they_claim():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 3
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in blocks:
            exec(compile(block, str(README), "exec"), namespace)
    printed = out.getvalue().splitlines()
    assert printed[0] == "[-1.  1. -1.] ['no' 'yes']"
    assert printed[1] == "(569, 30) (1000, 100)"
    objective, gap, certified = printed[2].split()
    assert certified == "True" and float(gap) <= 1e-9 * float(objective)
    assert namespace["sol"].certified
    assert printed[-2:] == ["True False", "gdp"]
