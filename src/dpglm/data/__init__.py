"""Reading, validating and generating datasets.

:func:`load` turns a CSV / LIBSVM / Parquet file, a directory or glob pattern
of CSV / Parquet files (:func:`dataset_files` lists them), a NumPy array, a
SciPy sparse matrix or a pandas object into a validated :class:`Dataset`;
:func:`as_layout` gives the memory layout a solver reads.
:func:`make_synthetic` and :func:`load_bundled` provide datasets for
experiments. pandas is optional, imported only when a pandas object is passed;
pyarrow is imported when a CSV or Parquet file is read.

Examples
--------
>>> from dpglm.data import load_bundled, as_layout
>>> ds = load_bundled("diabetes")
>>> ds.X.flags.c_contiguous, as_layout(ds.X, "columns").flags.f_contiguous
(True, True)
"""

from dpglm.data.bundled import BUNDLED_DATASETS, load_bundled
from dpglm.data.dataset import Dataset
from dpglm.data.directories import dataset_files
from dpglm.data.files import SUPPORTED_EXTENSIONS
from dpglm.data.labels import BinaryLabels, ClassLabels
from dpglm.data.layout import LAYOUTS, as_layout
from dpglm.data.loader import load
from dpglm.data.synthetic import SYNTHETIC_DATASETS, make_synthetic

__all__ = [
    "BUNDLED_DATASETS",
    "LAYOUTS",
    "SUPPORTED_EXTENSIONS",
    "SYNTHETIC_DATASETS",
    "BinaryLabels",
    "ClassLabels",
    "Dataset",
    "as_layout",
    "dataset_files",
    "load",
    "load_bundled",
    "make_synthetic",
]
