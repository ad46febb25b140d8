"""The ``dpglm`` command on raw tables: CSV and Parquet files whose feature columns hold text."""

import csv
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

from dpglm.cli import main
from dpglm.estimators import load_model
from dpglm.preprocessing.label_sets import label_share

#: the raw UCI adult table (the same file as the datasets' adult_raw_train.csv.gz)
ADULT = Path(__file__).resolve().parent / "data" / "adult_raw_train.csv.gz"
CITIES = ("north", "south", "east", "west")
PLANS = ("basic", "pro", "?")


def call(capsys, *args):
    """``main(args)`` in this process: (exit status, stdout, stderr)."""
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


def _records(n=3000, seed=0):
    """Two numeric and two text columns; the label follows the city (5% of labels flipped)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 70, n)
    hours = rng.uniform(0, 60, n).round(2)
    city = rng.choice(CITIES, n)
    plan = rng.choice(PLANS, n, p=[0.4, 0.35, 0.25])
    yes = np.isin(city, ("north", "east")) ^ (rng.uniform(size=n) < 0.05)
    label = np.where(yes, "yes", "no")
    return {"age": age, "city": city, "hours": hours, "plan": plan, "label": label}


def _write_csv(path, records, columns=None):
    columns = columns or list(records)
    with open(path, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(columns)
        writer.writerows(zip(*(records[c] for c in columns), strict=True))
    return path


def _write_parquet(path, records, columns=None):
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = columns or list(records)
    pq.write_table(pa.table({c: records[c] for c in columns}), path)
    return path


def _printed_scores(out):
    """The model's and the baseline's accuracy, as fit --test-size and score print them."""
    model = re.search(r"^  accuracy (\d+\.\d+)", out, flags=re.M)
    baseline = re.search(r"^  baseline accuracy (\d+\.\d+)", out, flags=re.M)
    return float(model.group(1)), float(baseline.group(1))


@pytest.fixture
def mixed_csv(tmp_path):
    return _write_csv(tmp_path / "people.csv", _records())


@pytest.fixture
def fitted(capsys, mixed_csv, tmp_path):
    """A model fitted on the mixed CSV file: (its path, fit's stdout)."""
    model_path = tmp_path / "m.json"
    status, out, err = call(
        capsys, "fit", mixed_csv, "--model", "logistic", "--target", "label", "--epsilon", "1",
        "--missing-values", "?", "--seed", "0", "-o", model_path, "-q",
    )  # fmt: skip
    assert status == 0, err
    return model_path, out


def test_fit_on_a_csv_with_text_columns_says_what_the_categories_cost(fitted):
    model_path, out = fitted
    model = load_model(model_path)
    encoding = model.encoding_
    assert encoding.numeric == ("age", "hours") and encoding.categorical == ("city", "plan")
    n_one_hot = len(model.encoded_feature_names_) - 2
    assert n_one_hot >= 6  # four cities, two plans and the missing level at least
    assert (
        f"on people.csv: 3000 records, 4 features (2 numeric, 2 text one-hot encoded into "
        f"{n_one_hot} columns), target 'label', classes ['no', 'yes']"
    ) in out
    text = " ".join(out.split())
    # the label set is selected first, at its share; the categories take 10% of the rest
    share = label_share(3000, 1.0, 1.0 / 3000**2)
    labels = model.privacy_report_.parts["label selection"]
    assert 0.99 * share <= labels <= share * (1 + 1e-9)
    assert (
        f"label selection: the label set ['no', 'yes'] took epsilon {labels:.3g} of the 1 (on "
        f"its own; {share:.0%} of the budget); public --classes cost nothing"
    ) in text
    part = model.privacy_report_.parts["category selection"]
    assert part == pytest.approx(0.1 * (1.0 - share), rel=1e-3)
    assert (
        f"category selection: the values of the 2 text columns took epsilon {part:.3g} of the "
        f"1 (on their own; {0.1 * (1.0 - share):.0%} of the budget)"
    ) in text
    assert text.index("label selection:") < text.index("category selection:")
    assert f"one-hot encoded into {n_one_hot} columns" in text
    assert "preprocessing: the private ranges" in text
    assert model.privacy_report_.epsilon <= 1.0 + 1e-9
    # --missing-values went to the model, and its level with it
    assert encoding.to_dict()["missing_values"] in ("?", ["?"])
    assert "plan_<missing>" in model.encoded_feature_names_


def test_predict_on_a_raw_file_gives_labels_of_the_class_set(capsys, fitted, tmp_path):
    model_path, _ = fitted
    records = _records(n=500, seed=1)
    # the columns in another order, an identifier and no target: read by name
    records["id"] = np.arange(500)
    data = _write_csv(tmp_path / "new.csv", records, ["id", "plan", "hours", "city", "age"])
    status, out, err = call(capsys, "predict", model_path, data)
    assert status == 0, err
    rows = list(csv.DictReader(out.splitlines()))
    assert len(rows) == 500 and set(rows[0]) == {"prediction", "probability_yes"}
    predicted = np.array([row["prediction"] for row in rows])
    assert set(predicted) <= {"no", "yes"}
    assert np.mean(predicted == records["label"]) > 0.85
    written = tmp_path / "p.csv"
    status, out, err = call(capsys, "predict", model_path, data, "-o", written)
    assert status == 0, err
    assert f"500 predictions written to {str(written)!r}" in out


def test_score_on_a_raw_file_beats_the_baseline(capsys, fitted, tmp_path):
    model_path, _ = fitted
    data = _write_csv(tmp_path / "new.csv", _records(n=800, seed=2))
    status, out, err = call(capsys, "score", model_path, data, "--target", "label")
    assert status == 0, err
    assert "scored on new.csv: 800 records, target 'label'" in out
    accuracy, baseline = _printed_scores(out)
    assert accuracy > 0.85 and accuracy > baseline + 0.2
    assert err == ""


def test_public_categories_cost_nothing(capsys, mixed_csv, tmp_path):
    categories = tmp_path / "categories.json"
    categories.write_text(json.dumps({"city": list(CITIES), "plan": ["basic", "pro", "?"]}))
    model_path = tmp_path / "m.json"
    status, out, err = call(
        capsys, "fit", mixed_csv, "--model", "logistic", "--target", "label", "--epsilon", "1",
        "--categories", categories, "--missing-values", "?", "--seed", "0", "-o", model_path,
        "-q",
    )  # fmt: skip
    assert status == 0, err
    model = load_model(model_path)
    report = model.privacy_report_
    assert report.parts.get("category selection", 0.0) == 0.0
    assert report.epsilon <= 1.0 + 1e-9
    # each column: its public values in their order ('?' the missing level), then <other>
    assert list(model.encoded_feature_names_[2:]) == [
        *(f"city_{city}" for city in CITIES), "city_<other>",
        "plan_basic", "plan_pro", "plan_<missing>", "plan_<other>",
    ]  # fmt: skip
    text = " ".join(out.split())
    assert "category selection: none, the values of the 2 text columns are public" in text


def test_test_size_holds_out_rows_of_the_table(capsys, mixed_csv, tmp_path):
    status, out, err = call(
        capsys, "fit", mixed_csv, "--model", "logistic", "--target", "label", "--classes",
        "no,yes", "--missing-values", "?", "--test-size", "0.2", "--seed", "0", "-o",
        tmp_path / "m.json", "-q",
    )  # fmt: skip
    assert status == 0, err
    assert "2400 records (600 more held out)" in out
    assert "held-out score on the 600 records not used for training:" in out
    accuracy, baseline = _printed_scores(out)
    assert accuracy > 0.85 and baseline < 0.65
    # recomputed on the split of numeric files, drawn from n and --seed only
    import pyarrow.csv

    from dpglm.cli.scoring import held_out_split

    train, test = held_out_split(3000, 0.2, seed=0)
    table = pyarrow.csv.read_csv(mixed_csv)
    labels = np.array(table.column("label").to_pylist())
    model = load_model(tmp_path / "m.json")
    predicted = model.predict(table.drop_columns(["label"]).take(test))
    majority = "yes" if np.mean(labels[train] == "yes") > 0.5 else "no"
    expected = (np.mean(predicted == labels[test]), np.mean(labels[test] == majority))
    assert (accuracy, baseline) == pytest.approx(expected, abs=5e-5)
    assert f"(always {majority!r}, the majority class of the training records)" in out
    # the model was fitted on the 2400 training rows: delta is 1 / n^2 of them
    assert model.delta_ == pytest.approx(1 / 2400**2)


def test_parquet_files_with_text_columns(capsys, tmp_path):
    folder = tmp_path / "parts"
    folder.mkdir()
    records = _records()
    half = {c: v[:1500] for c, v in records.items()}
    rest = {c: v[1500:] for c, v in records.items()}
    _write_parquet(folder / "part-0.parquet", half)
    _write_parquet(folder / "part-1.parquet", rest)
    model_path = tmp_path / "m.json"
    status, out, err = call(
        capsys, "fit", folder, "--model", "logistic", "--target", "label", "--seed", "0",
        "-o", model_path, "-q",
    )  # fmt: skip
    assert status == 0, err
    assert "on parts (2 files): 3000 records, 4 features (2 numeric, 2 text" in out
    new = _write_parquet(tmp_path / "new.parquet", _records(n=600, seed=3))
    status, out, err = call(capsys, "score", model_path, new, "--target", "label")
    assert status == 0, err
    accuracy, baseline = _printed_scores(out)
    assert accuracy > 0.85 and accuracy > baseline


def test_malformed_categories_file_is_named(capsys, mixed_csv, tmp_path):
    base = ["fit", mixed_csv, "--model", "logistic", "--target", "label", "-o",
            tmp_path / "m.json", "-q"]  # fmt: skip
    broken = tmp_path / "broken.json"
    broken.write_text('{"city": ["north",')
    status, _, err = call(capsys, *base, "--categories", broken)
    assert status == 1
    assert f"--categories {str(broken)!r} is not valid JSON" in err
    assert not (tmp_path / "m.json").exists()
    listed = tmp_path / "listed.json"
    listed.write_text('["north", "south"]')
    status, _, err = call(capsys, *base, "--categories", listed)
    assert status == 1 and "listed.json' holds a JSON list, not an object" in err
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"city": "north"}')
    status, _, err = call(capsys, *base, "--categories", wrong)
    assert status == 1 and "wrong.json': column 'city' has \"north\", not a list" in err
    status, _, err = call(capsys, *base, "--categories", tmp_path / "absent.json")
    assert status == 1 and "absent.json': no such file" in err
    unknown = tmp_path / "unknown.json"
    unknown.write_text('{"town": ["a"], "age": [20]}')
    status, _, err = call(capsys, *base, "--categories", unknown)
    assert status == 1
    assert "unknown.json' names ['town', 'age'], not text feature column(s)" in err
    assert "its text feature columns: ['city', 'plan']" in err


def test_bad_cells_name_the_file_column_and_row(capsys, tmp_path):
    records = _records(n=200)
    age = records["age"].astype(object)
    age[7] = "forty"  # a word among numbers: a typo, not a column of categories
    records["age"] = age
    data = _write_csv(tmp_path / "typo.csv", records)
    status, _, err = call(capsys, "fit", data, "--model", "logistic", "-o", tmp_path / "m.json")
    assert status == 1
    assert "feature column 'age' (index 0) holds numbers" in err
    assert "'forty' at row 7 (line 9 of typo.csv)" in err
    age[7] = "?"  # a missing value in a numeric column
    data = _write_csv(tmp_path / "gap.csv", records)
    status, _, err = call(
        capsys, "fit", data, "--model", "logistic", "--missing-values", "?",
        "-o", tmp_path / "m.json",
    )  # fmt: skip
    assert status == 1
    assert "feature column 'age' (index 0) has a missing value ('?') at row 7 (line 9" in err


def test_a_numeric_file_takes_the_numeric_path(capsys, tmp_path, monkeypatch):
    import dpglm.cli.raw_tables

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (2000, 3)).round(4)
    labels = np.where(X[:, 0] + 0.5 * X[:, 1] > 0, "yes", "no")
    records = {"a": X[:, 0], "b": X[:, 1], "c": X[:, 2], "label": labels}
    data = _write_csv(tmp_path / "numbers.csv", records)

    def refuse(*args, **kwargs):
        raise AssertionError("a numeric file was read as a raw table")

    monkeypatch.setattr(dpglm.cli.raw_tables, "read_raw_table", refuse)
    args = ["fit", data, "--model", "logistic", "--feature-bounds", "1", "--seed", "0",
            "--test-size", "0.25", "-q"]  # fmt: skip
    status, out, err = call(capsys, *args, "-o", tmp_path / "plain.json")
    assert status == 0, err
    assert "on numbers.csv: 1500 records (500 more held out), 3 features, target 'label'" in out
    assert "category selection" not in out and "one-hot" not in out
    model = load_model(tmp_path / "plain.json")
    assert getattr(model, "encoding_", None) is None
    assert list(model.feature_names_in_) == ["a", "b", "c"]
    # --missing-values changes nothing on a file without text columns
    status, again, err = call(capsys, *args, "--missing-values", "?", "-o", tmp_path / "m.json")
    assert status == 0, err

    def timeless(text):
        return re.sub(r"updates, [\d.]+ m?s", "updates", text.replace("m.json", "plain.json"))

    assert timeless(again) == timeless(out)
    assert load_model(tmp_path / "m.json").coef_.tolist() == model.coef_.tolist()


def test_raw_adult_table_end_to_end(capsys, tmp_path):
    start = time.perf_counter()
    status, out, err = call(
        capsys, "fit", ADULT, "--model", "logistic", "--target", "target", "--test-size",
        "0.25", "--missing-values", "?", "--epsilon", "1", "--seed", "0",
        "-o", tmp_path / "adult.json", "-q",
    )  # fmt: skip
    seconds = time.perf_counter() - start
    assert status == 0, err
    assert "14 features (6 numeric, 8 text one-hot encoded into" in out
    accuracy, baseline = _printed_scores(out)
    assert accuracy > 0.80 and accuracy > baseline
    assert "category selection: the values of the 8 text columns took epsilon" in out
    assert seconds < 30, f"the raw adult fit took {seconds:.1f} s"
