"""Datasets of several files: a directory or a glob pattern of CSV, CSV.gz or Parquet files.

Every test writes real files to ``tmp_path`` and reads them back through
:func:`dpglm.data.load`, :func:`dpglm.data.dataset_files` or the ``dpglm``
command; a dataset of files is checked against the one file holding their
rows, read as before.
"""

import gzip
import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpglm.cli import main, read_features
from dpglm.data import dataset_files, load
from dpglm.exceptions import (
    DataError,
    NonFiniteValueError,
    NonNumericColumnError,
    ShapeMismatchError,
    TargetError,
    UnreadableFileError,
)

FORMATS = ("parquet", "csv", "csv.gz")


def write(path, columns):
    """Write ``columns`` (a dict of name to list of values) as CSV, CSV.gz or Parquet."""
    name = os.fspath(path)
    if name.endswith(".parquet"):
        pq.write_table(pa.table(columns), path)
        return path
    names = list(columns)
    rows = zip(*columns.values(), strict=True)
    text = ",".join(names) + "\n" + "".join(",".join(map(_cell, r)) + "\n" for r in rows)
    data = text.encode()
    path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    return path


def _cell(value):
    return repr(float(value)) if isinstance(value, float | np.floating) else str(value)


def parts(n_files=3, rows=40, seed=0, labels=("a", "b")):
    """Columns of ``n_files`` files: two features, an integer feature and a label."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_files):
        out.append(
            {
                "x1": rng.normal(size=rows).tolist(),
                "x2": rng.uniform(-1, 1, size=rows).tolist(),
                "count": rng.integers(0, 9, size=rows).tolist(),
                "label": rng.choice(labels, size=rows).tolist(),
            }
        )
    return out


def joined(columns):
    """The columns of several files, as those of one file holding their rows in order."""
    return {name: [v for c in columns for v in c[name]] for name in columns[0]}


def assert_same_dataset(ds, expected):
    np.testing.assert_array_equal(ds.X, expected.X)
    np.testing.assert_array_equal(ds.y, expected.y)
    assert ds.X.dtype == np.float64 and ds.X.flags.f_contiguous
    assert ds.feature_names == expected.feature_names
    assert ds.target_name == expected.target_name
    if expected.task == "classification":
        np.testing.assert_array_equal(ds.classes, expected.classes)


# -- the same dataset as one file ------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("how", ["directory", "glob"])
@pytest.mark.parametrize("task", ["regression", "classification"])
def test_a_dataset_of_files_is_the_one_file_of_their_rows(tmp_path, fmt, how, task):
    files = parts()
    folder = tmp_path / "parts"
    folder.mkdir()
    for k, columns in enumerate(files):
        if task == "regression":
            columns = {**columns, "label": columns["x1"]}  # a numeric target
        write(folder / f"part-{k}.{fmt}", columns)
    if task == "regression":
        files = [{**c, "label": c["x1"]} for c in files]
    whole = write(tmp_path / f"whole.{fmt}", joined(files))
    path = folder if how == "directory" else folder / f"part-*.{fmt}"
    ds = load(path, target="label", task=task)
    expected = load(whole, target="label", task=task)
    assert_same_dataset(ds, expected)
    assert ds.n_samples == 120 and ds.feature_names == ["x1", "x2", "count"]
    shown = "parts" if how == "directory" else os.fspath(path)
    assert ds.source == f"{shown} (3 files)"


@pytest.mark.parametrize("fmt", FORMATS)
def test_rows_come_file_after_file_in_the_order_of_the_names(tmp_path, fmt):
    # written in another order than their names; "part-10" sorts before "part-2"
    names = ["part-2", "part-10", "part-03", "part-1"]
    for k, name in enumerate(names):
        write(tmp_path / f"{name}.{fmt}", {"x": [float(k), float(k) + 0.5], "y": [k, k]})
    ds = load(tmp_path)
    order = sorted(names)
    assert order == ["part-03", "part-1", "part-10", "part-2"]
    expected = [v for name in order for v in (names.index(name), names.index(name) + 0.5)]
    np.testing.assert_array_equal(ds.X[:, 0], expected)
    assert [p.stem.split(".")[0] for p in dataset_files(tmp_path)] == order


def test_a_label_of_the_second_file_only_is_a_class(tmp_path):
    for fmt in FORMATS:
        folder = tmp_path / fmt.replace(".", "_")
        folder.mkdir()
        write(folder / f"a.{fmt}", {"x": [0.0, 1.0], "y": ["no", "yes"]})
        write(folder / f"b.{fmt}", {"x": [2.0, 3.0], "y": ["maybe", "no"]})
        ds = load(folder, task="classification")
        assert ds.classes.tolist() == ["maybe", "no", "yes"], fmt
        assert ds.decode(ds.y).tolist() == ["no", "yes", "maybe", "no"], fmt


def test_csv_labels_are_typed_over_every_file(tmp_path):
    # as in one file: integers if every label is one, else text; "10" is a number here
    write(tmp_path / "a.csv", {"x": [0.0, 1.0], "y": [9, 10]})
    write(tmp_path / "b.csv", {"x": [2.0, 3.0], "y": [9, 2]})
    assert load(tmp_path, task="classification").classes.tolist() == [2, 9, 10]
    write(tmp_path / "c.csv", {"x": [4.0], "y": ["cat"]})
    assert load(tmp_path, task="classification").classes.tolist() == ["10", "2", "9", "cat"]


def test_parquet_batches_fill_the_matrix_and_name_the_row_of_the_file(tmp_path):
    # row groups of 4096 rows: a file is read in several batches
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30_000, 4))
    names = ["a", "b", "c", "d"]

    def write_part(path, values):
        table = dict(zip(names, values.T, strict=True)) | {"y": values[:, 0]}
        pq.write_table(pa.table(table), path, row_group_size=4096)

    for k in range(2):
        write_part(tmp_path / f"{k}.parquet", X[15_000 * k : 15_000 * (k + 1)])
    assert pq.ParquetFile(tmp_path / "1.parquet").metadata.num_row_groups == 4
    ds = load(tmp_path)
    np.testing.assert_array_equal(ds.X, X)
    np.testing.assert_array_equal(ds.y, X[:, 0])
    assert ds.feature_names == names
    # a bad cell in the fourth row group of the second file
    bad = X[15_000:].copy()
    bad[12_345, 1] = np.inf
    write_part(tmp_path / "1.parquet", bad)
    with pytest.raises(NonFiniteValueError, match=r"'b' .* inf at row 12345 of '.*1\.parquet'"):
        load(tmp_path)


def test_empty_parts_add_no_rows(tmp_path):
    write(tmp_path / "a.parquet", {"x": [1.0, 2.0], "y": [0.0, 1.0]})
    pq.write_table(
        pa.table({"x": pa.array([], pa.float64()), "y": pa.array([], pa.float64())}),
        tmp_path / "b.parquet",
    )
    write(tmp_path / "c.parquet", {"x": [3.0], "y": [1.0]})
    np.testing.assert_array_equal(load(tmp_path).X.ravel(), [1.0, 2.0, 3.0])
    csv = tmp_path / "csv"
    csv.mkdir()
    write(csv / "a.csv", {"x": [1.0], "y": [0.0]})
    (csv / "b.csv").write_text("x,y\n")  # a header, no rows
    write(csv / "c.csv", {"x": [3.0], "y": [1.0]})
    np.testing.assert_array_equal(load(csv).X.ravel(), [1.0, 3.0])
    # a file alone still needs rows
    with pytest.raises(DataError, match="has a header but no data rows"):
        load(csv / "b.csv")


# -- which files -----------------------------------------------------------------------


def test_dataset_files_skips_hidden_entries_and_reads_folders(tmp_path):
    for name in ("b.parquet", "a.parquet", "_SUCCESS", ".a.parquet.crc", "_metadata"):
        (tmp_path / name).write_bytes(b"")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "c.parquet").write_bytes(b"")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "d.csv").write_bytes(b"")
    found = [p.relative_to(tmp_path).as_posix() for p in dataset_files(tmp_path)]
    assert found == ["a.parquet", "b.parquet", "sub/c.parquet"]
    pattern = [p.name for p in dataset_files(os.fspath(tmp_path) + "/[ab].parq?et")]
    assert pattern == ["a.parquet", "b.parquet"]
    recursive = [p.name for p in dataset_files(tmp_path / "**" / "*.parquet")]
    assert recursive == ["a.parquet", "b.parquet", "c.parquet"]
    # a pattern whose last part starts with "_" or "." gets such names
    (tmp_path / "_x.parquet").write_bytes(b"")
    assert [p.name for p in dataset_files(tmp_path / "*.parquet")] == ["a.parquet", "b.parquet"]
    assert [p.name for p in dataset_files(tmp_path / "_*.parquet")] == ["_x.parquet"]
    one = tmp_path / "a.parquet"
    assert dataset_files(one) == [one]
    assert isinstance(dataset_files(os.fspath(one))[0], type(one))


def test_a_folder_named_like_a_file_is_a_dataset(tmp_path):
    # e.g. what Spark writes as out.parquet/part-....parquet
    folder = tmp_path / "out.parquet"
    folder.mkdir()
    write(folder / "part-00000.parquet", {"x": [1.0], "y": [2.0]})
    write(folder / "part-00001.parquet", {"x": [3.0], "y": [4.0]})
    (folder / "_SUCCESS").write_bytes(b"")
    ds = load(folder)
    assert ds.y.tolist() == [2.0, 4.0] and ds.source == "out.parquet (2 files)"


def test_an_empty_directory_or_a_pattern_without_match_is_refused(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "_SUCCESS").write_bytes(b"")
    with pytest.raises(UnreadableFileError, match=r"'.*empty': Is a directory without data"):
        load(empty)
    with pytest.raises(UnreadableFileError, match=r"'.*nothing-\*\.csv': no file matches"):
        load(tmp_path / "nothing-*.csv")
    with pytest.raises(UnreadableFileError, match="No such file or directory"):
        dataset_files(tmp_path / "missing.csv")


def test_mixed_formats_are_refused_naming_each_file_and_its_format(tmp_path):
    write(tmp_path / "a.csv", {"x": [1.0], "y": [2.0]})
    write(tmp_path / "b.parquet", {"x": [1.0], "y": [2.0]})
    with pytest.raises(UnreadableFileError) as caught:
        load(tmp_path)
    message = str(caught.value)
    assert "mixes formats" in message
    assert f"{os.fspath(tmp_path / 'a.csv')!r} is CSV" in message
    assert f"{os.fspath(tmp_path / 'b.parquet')!r} is Parquet" in message
    # plain and gzip CSV are one format
    (tmp_path / "b.parquet").unlink()
    write(tmp_path / "c.csv.gz", {"x": [3.0], "y": [4.0]})
    assert load(tmp_path).y.tolist() == [2.0, 4.0]


def test_libsvm_and_unknown_files_are_refused_in_a_dataset(tmp_path):
    write(tmp_path / "a.csv", {"x": [1.0], "y": [2.0]})
    (tmp_path / "b.svm").write_text("1 1:0.5\n")
    with pytest.raises(UnreadableFileError, match=r"'.*b\.svm' is a LIBSVM file"):
        load(tmp_path)
    (tmp_path / "b.svm").unlink()
    (tmp_path / "notes.txt").write_text("where the data came from")
    with pytest.raises(UnreadableFileError, match=r"'.*notes\.txt' is not a data file"):
        dataset_files(tmp_path)


# -- every file has the same columns ---------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_file_with_other_columns_is_named_with_the_columns(tmp_path, fmt):
    write(tmp_path / f"a.{fmt}", {"x": [1.0], "z": [0.0], "y": [2.0]})
    write(tmp_path / f"b.{fmt}", {"x": [1.0], "z": [0.0], "y": [2.0]})
    write(tmp_path / f"c.{fmt}", {"x": [1.0], "w": [0.0], "y": [2.0]})
    with pytest.raises(ShapeMismatchError) as caught:
        load(tmp_path)
    message = str(caught.value)
    assert message.startswith(f"{os.fspath(tmp_path / f'c.{fmt}')!r} does not have the columns")
    assert f"of {os.fspath(tmp_path / f'a.{fmt}')!r}, the first file" in message
    assert "it lacks ['z'] and has ['w'] more" in message
    write(tmp_path / f"c.{fmt}", {"z": [0.0], "x": [1.0], "y": [2.0]})
    with pytest.raises(ShapeMismatchError, match=r"c\..*\['z', 'x', 'y'\], in another order"):
        load(tmp_path)


# -- bad data names the file and its row -----------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "csv.gz"])
def test_a_bad_csv_cell_names_the_file_row_and_line(tmp_path, fmt):
    write(tmp_path / f"a.{fmt}", {"x": [1.0, 2.0], "y": [0.0, 1.0]})
    write(tmp_path / f"b.{fmt}", {"x": [1.0, 2.0, "NA"], "y": [0.0, 1.0, 1.0]})
    b = os.fspath(tmp_path / f"b.{fmt}")
    with pytest.raises(NonFiniteValueError) as caught:
        load(tmp_path)
    assert (
        f"feature column 'x' (index 0) has a missing value ('NA') at row 2 (line 4 of {b!r})"
        in (str(caught.value))
    )
    write(tmp_path / f"b.{fmt}", {"x": [1.0, "red"], "y": [0.0, 1.0]})
    with pytest.raises(NonNumericColumnError, match=rf"row 1 \(line 3 of {b!r}\) holds 'red'"):
        load(tmp_path)
    write(tmp_path / f"b.{fmt}", {"x": [1.0, 2.0], "y": [0.0, "?"]})
    with pytest.raises(NonFiniteValueError, match=rf"target 'y' .*row 1 \(line 3 of {b!r}\)"):
        load(tmp_path)


def test_a_bad_classification_label_names_its_file(tmp_path):
    write(tmp_path / "a.csv", {"x": [1.0, 2.0], "y": ["no", "yes"]})
    write(tmp_path / "b.csv", {"x": [1.0, 2.0, 3.0], "y": ["no", "yes", "NA"]})
    b = os.fspath(tmp_path / "b.csv")
    with pytest.raises(NonFiniteValueError, match=rf"row 2 \(line 4 of {b!r}\)"):
        load(tmp_path, task="classification")
    write(tmp_path / "b.csv", {"x": [1.0], "y": ["cat"]})
    with pytest.raises(TargetError, match=rf"'cat' .*row 0 \(line 2 of {b!r}\)"):
        load(tmp_path, task="classification", classes=["no", "yes"])


def test_a_bad_parquet_cell_names_the_file_and_row(tmp_path):
    write(tmp_path / "a.parquet", {"x": [1.0, 2.0], "y": [0.0, 1.0]})
    write(tmp_path / "b.parquet", {"x": [1.0, None], "y": [0.0, 1.0]})
    b = os.fspath(tmp_path / "b.parquet")
    with pytest.raises(NonFiniteValueError, match=rf"'x' .* missing value at row 1 of {b!r}"):
        load(tmp_path)
    write(tmp_path / "b.parquet", {"x": ["red", "blue"], "y": [0.0, 1.0]})
    with pytest.raises(NonNumericColumnError, match=rf"row 0 of {b!r} holds 'red'"):
        load(tmp_path)
    write(tmp_path / "b.parquet", {"x": [1.0, 2.0], "y": [0.0, None]})
    with pytest.raises(NonFiniteValueError, match=rf"target 'y' .*row 1 of {b!r}"):
        load(tmp_path)
    write(tmp_path / "b.parquet", {"x": [1.0, 2.0], "y": ["no", "yes"]})
    with pytest.raises(TargetError, match=rf"holds text in {b!r} but numbers in"):
        load(tmp_path, task="classification")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_missing_target_column_names_the_dataset_and_its_columns(tmp_path, fmt):
    write(tmp_path / f"a.{fmt}", {"x": [1.0], "y": [2.0]})
    write(tmp_path / f"b.{fmt}", {"x": [3.0], "y": [4.0]})
    with pytest.raises(TargetError, match=r"has no column named 'price' .*\['x', 'y'\]"):
        load(tmp_path, target="price")


# -- truncated and corrupt files -------------------------------------------------------


def test_a_truncated_parquet_file_is_named_alone_and_in_a_dataset(tmp_path):
    rng = np.random.default_rng(2)
    table = {"x": rng.normal(size=5000), "y": rng.normal(size=5000)}
    write(tmp_path / "a.parquet", table)
    whole = (tmp_path / "a.parquet").read_bytes()
    (tmp_path / "b.parquet").write_bytes(whole[: len(whole) // 2])
    b = os.fspath(tmp_path / "b.parquet")
    for path in (tmp_path, tmp_path / "*.parquet", tmp_path / "b.parquet"):
        with pytest.raises(UnreadableFileError, match=rf"cannot read {b!r}: not a valid Parquet"):
            load(path)
    # the footer intact but a data page gone
    body = whole[:4] + whole[4 + 2000 :]
    (tmp_path / "b.parquet").write_bytes(body)
    with pytest.raises(UnreadableFileError, match=rf"cannot read {b!r}"):
        load(tmp_path)


def test_a_truncated_gzip_file_is_named_alone_and_in_a_dataset(tmp_path):
    rows = {"x": np.arange(20_000.0).tolist(), "y": np.arange(20_000.0).tolist()}
    write(tmp_path / "a.csv.gz", rows)
    whole = (tmp_path / "a.csv.gz").read_bytes()
    (tmp_path / "b.csv.gz").write_bytes(whole[: len(whole) // 2])
    b = os.fspath(tmp_path / "b.csv.gz")
    for path in (tmp_path, tmp_path / "*.csv.gz", tmp_path / "b.csv.gz"):
        with pytest.raises(UnreadableFileError, match=rf"cannot read {b!r}: corrupt or truncated"):
            load(path)
    # cut within the first lines: the header cannot be read either
    (tmp_path / "b.csv.gz").write_bytes(whole[:15])
    with pytest.raises(UnreadableFileError, match=rf"cannot read {b!r}"):
        load(tmp_path)


# -- the command line ------------------------------------------------------------------


def _regression_parts(folder, fmt, n_files=4, rows=150, seed=3):
    rng = np.random.default_rng(seed)
    coef = np.array([0.5, -0.3, 0.2])
    files = []
    for k in range(n_files):
        X = rng.uniform(-1, 1, size=(rows, 3))
        y = np.clip(X @ coef + 0.05 * rng.normal(size=rows), -1, 1)
        columns = {"a": X[:, 0].tolist(), "b": X[:, 1].tolist(), "c": X[:, 2].tolist()}
        columns["id"] = (
            [f"r{k}-{i}" for i in range(rows)] if fmt != "parquet" else list(range(rows))
        )
        columns["y"] = y.tolist()
        files.append(columns)
        write(folder / f"part-{k}.{fmt}", columns)
    return files


@pytest.mark.parametrize("fmt", ["parquet", "csv.gz"])
def test_dpglm_fit_predict_and_score_read_a_directory_or_a_pattern(capsys, tmp_path, fmt):
    folder = tmp_path / "data"
    folder.mkdir()
    files = _regression_parts(folder, fmt)
    columns = {name: v for name, v in joined(files).items() if name != "id"}
    whole = write(tmp_path / f"whole.{fmt}", columns)
    no_id = tmp_path / "no_id"
    no_id.mkdir()
    for k, part in enumerate(files):
        write(no_id / f"part-{k}.{fmt}", {n: v for n, v in part.items() if n != "id"})
    common = ["--model", "ridge", "--epsilon", "1", "--feature-bounds", "1",
              "--target-bounds=-1,1", "--seed", "0", "-q"]  # fmt: skip
    status = main(["fit", str(no_id), *common, "-o", str(tmp_path / "dir.json")])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "on no_id (4 files): 600 records, 3 features, target 'y'" in out
    pattern = os.fspath(no_id / f"part-*.{fmt}")
    status = main(["fit", pattern, *common, "-o", str(tmp_path / "glob.json")])
    assert status == 0, capsys.readouterr().err
    status = main(["fit", str(whole), *common, "-o", str(tmp_path / "whole.json")])
    assert status == 0, capsys.readouterr().err
    models = [json.loads((tmp_path / f"{n}.json").read_text()) for n in ("dir", "glob", "whole")]
    # the same records in the same order, the same seed: the same model
    assert models[0]["coef"] == models[1]["coef"] == models[2]["coef"]
    assert models[0]["feature_names_in"] == ["a", "b", "c"]
    # predict and score on the folder with an extra identifier column
    predictions = tmp_path / "predictions.csv"
    status = main(["predict", str(tmp_path / "dir.json"), str(folder), "-o", str(predictions)])
    assert status == 0, capsys.readouterr().err
    X = np.array([columns["a"], columns["b"], columns["c"]]).T
    expected = X @ models[0]["coef"] + models[0]["intercept"]
    got = [float(line) for line in predictions.read_text().splitlines()[1:]]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-15)
    capsys.readouterr()
    status = main(["score", str(tmp_path / "dir.json"), str(folder), "--target", "y"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "scored on data: 600 records, target 'y'" in out


def test_dpglm_fit_names_the_bad_file_of_a_directory(capsys, tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    write(folder / "a.csv", {"x": [0.1, 0.2], "y": [0.0, 1.0]})
    write(folder / "b.csv", {"x": [0.1, "oops"], "y": [0.0, 1.0]})
    status = main(["fit", str(folder), "--model", "ridge", "--epsilon", "1",
                   "--feature-bounds", "1", "-o", str(tmp_path / "m.json")])  # fmt: skip
    _, err = capsys.readouterr()
    assert status == 1
    b = os.fspath(folder / "b.csv")
    # a column of numbers and words is a typo to fix, named by file and line, not categories
    assert f"'oops' at row 1 (line 3 of {b!r})" in err
    assert not (tmp_path / "m.json").exists()


def test_read_features_parses_csv_through_arrow_by_name(tmp_path):
    # identifiers and text columns beside the features are not parsed
    path = write(tmp_path / "new.csv", {"id": ["u", "v"], "b": [1, 3], "a": [2, 4]})
    X = read_features(path, names=["a", "b"], n_features=2)
    np.testing.assert_array_equal(X, [[2.0, 1.0], [4.0, 3.0]])
    assert X.flags.f_contiguous
    write(tmp_path / "new.csv", {"id": ["u", "v"], "b": [1, "NA"], "a": [2, 4]})
    with pytest.raises(
        NonFiniteValueError, match=r"'b' \(index 1\) .*row 1 \(line 3 of new\.csv\)"
    ):
        read_features(path, names=["a", "b"], n_features=2)
