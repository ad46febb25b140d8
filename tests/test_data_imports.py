"""Optional dependencies stay optional."""

import subprocess
import sys

CODE = """
import os
import sys
import tempfile

import numpy as np

import dpglm.data

dpglm.data.load(np.eye(2), [0.0, 1.0])
dpglm.data.make_synthetic("log1", random_state=0)
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "d.csv")
    with open(path, "w") as f:
        f.write("a,y\\n1,no\\n2,yes\\n")
    dpglm.data.load(path, task="classification")
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("pandas", "pyarrow"))
print(",".join(loaded) or "none")
"""


def test_import_and_csv_do_not_load_pandas_or_pyarrow():
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "none"


def test_public_names():
    import dpglm.data

    for name in dpglm.data.__all__:
        assert getattr(dpglm.data, name) is not None
    expected = {"load", "Dataset", "BinaryLabels", "as_layout", "make_synthetic", "load_bundled"}
    assert expected <= set(dpglm.data.__all__)
