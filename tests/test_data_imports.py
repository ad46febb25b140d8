"""Optional dependencies stay optional."""

import subprocess
import sys

CODE = """
import os
import sys
import tempfile

import numpy as np

import dpglm.data


def loaded(package):
    return any(m.split(".")[0] == package for m in sys.modules)


dpglm.data.load(np.eye(2), [0.0, 1.0])
dpglm.data.make_synthetic("log1", random_state=0)
before = loaded("pyarrow"), loaded("pandas")
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "d.csv")
    with open(path, "w") as f:
        f.write("a,y\\n1,no\\n2,yes\\n")
    dpglm.data.load(path, task="classification")
print(*before, loaded("pyarrow"), loaded("pandas"))
"""


def test_arrays_load_neither_pandas_nor_pyarrow_and_csv_files_load_pyarrow_only():
    """pyarrow (a dependency) parses CSV and Parquet files, and is imported when one is
    read; pandas (optional) never is by dpglm.data itself."""
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "True", "False"]


def test_public_names():
    import dpglm.data

    for name in dpglm.data.__all__:
        assert getattr(dpglm.data, name) is not None
    expected = {"load", "Dataset", "BinaryLabels", "as_layout", "make_synthetic", "load_bundled"}
    assert expected <= set(dpglm.data.__all__)
