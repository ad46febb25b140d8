"""The README's examples work as written: its Python blocks print what their comments say,
and its shell commands run (from a directory laid out like the repository root)."""

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from dpglm.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def blocks(language):
    return re.findall(rf"```{language}\n(.*?)```", README.read_text(), flags=re.S)


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_readme_python_examples_run_and_print_what_they_claim(monkeypatch):
    monkeypatch.chdir(ROOT)  # the examples read tests/data/... from the repository root
    namespace: dict = {}
    printed = {}
    for block in blocks("python"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(block, str(README), "exec"), namespace)
        printed[block] = out.getvalue().splitlines()

    def output(marker):
        (block,) = [b for b in printed if marker in b]
        return printed[block]

    def claimed(marker):
        """The comment of the README line that holds ``marker``: what it prints."""
        (line,) = [line for line in README.read_text().splitlines() if marker in line]
        return line.split("  # ", 1)[1]

    # raw data, only epsilon: unseeded; R^2 0.57 to 0.62 over 30 fits, printed to one digit
    raw = output("houses = load(")
    assert raw == [
        claimed("print(model.solver_, round(model.score(houses"),
        claimed('print(round(model.privacy_report_.parts["preprocessing"]'),
    ]
    # a raw table with string columns: unseeded; .833 to .834 over six fits, printed to one digit
    assert output("adult = pyarrow.csv.read_csv(") == [
        claimed("print(round(census.score("),
        claimed('print(round(census.privacy_report_.parts["category selection"]'),
    ]
    # sparse text: unseeded; the solver "auto" takes is fixed by the shape
    assert output("spam_model = DPLogisticRegression(") == [claimed("print(spam_model.solver_)")]
    # an estimator in five lines; unseeded, so only what holds whatever the noise is printed
    five_lines = output("model.fit(phishing.X, phishing.y)")
    assert five_lines == [claimed("print(model.solver_, round(model.score(phishing")]
    # more than two classes: what holds whatever the noise
    assert output("digits = load_digits()") == [claimed("print(digit_model.multi_class_")]
    # records in row chunks: fitted where they are, and the report says so
    assert output("chunked = DPLogisticRegression") == [
        claimed("print(chunked.privacy_report_.execution)")
    ]
    # the privacy report: the README quotes the guarantee's first line
    report = output("report = model.privacy_report_")
    assert report[0] == claimed("print(report.guarantee") == "True 1.0 8.18e-09"
    quoted = re.search(r"prints the guarantee \(here `([^`]+)`\)", README.read_text()).group(1)
    assert report[1] == " ".join(quoted.split())
    assert "assumptions:" in report
    # the budget ledger: the comments after the loop are its output
    ledger = next(b for b in printed if "PrivacyBudget.open(ledger" in b)
    expected = [line[2:] for line in ledger.splitlines() if line.startswith("# fit ")]
    assert printed[ledger] == expected and len(expected) == 3
    # private hyperparameter search: which candidate wins is a noisy choice, not printed
    assert output("search = PrivateSearchCV(") == [claimed("print(best in search.candidates_")]
    # its label selection first (Gaussian counts, a GDP accountant), then the search's own
    assert namespace["search"].privacy_report_.accountant == "gdp + rdp (basic composition)"
    assert "label selection" in namespace["search"].privacy_report_.parts
    # reading data
    data = output("load_bundled(")
    assert data == ["[-1.  1. -1.] ['no' 'yes']", "(569, 30) (1000, 100)"]
    # problems and the reference solver
    objective, gap, certified = output("solve_reference(prob)")[0].split()
    assert certified == "True" and float(gap) <= 1e-9 * float(objective)
    assert namespace["sol"].certified
    # accounting
    assert output("calibrate(template")[-2:] == ["True False", "gdp"]


def test_readme_examples_set_no_seed_for_a_fit():
    """A fixed seed is for reproducible experiments, not for a release: the examples that
    fit something draw fresh noise; the only seed left makes synthetic data."""
    seeded = [
        line
        for block in blocks("python")
        for line in block.splitlines()
        if "random_state" in line or "seed" in line
    ]
    assert seeded == [line for line in seeded if line.startswith("log1 = make_synthetic(")]
    assert len(seeded) == 1
    assert "### Seeds" in README.read_text()


def commands():
    """Every command of the README's shell blocks, continuation lines joined."""
    found = []
    for block in blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            found += [part.strip() for part in line.split("&&") if part.strip()]
    return found


def test_readme_install_commands_are_the_ones_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text()
    pyproject = (ROOT / "pyproject.toml").read_text()
    installs = [c for c in commands() if c.startswith("pip ")]
    assert installs == ["pip install '.[plot]'", "pip install '.[test]'"]
    assert "pip install --quiet '.[test]'" in ci and re.search(r"^pytest ", ci, flags=re.M)
    assert re.search(r'^plot = \["matplotlib', pyproject, flags=re.M)
    assert 'dpglm = "dpglm.cli:main"' in pyproject
    assert "pytest" in commands()
    assert (ROOT / "docs" / "demo.png").read_bytes()[:4] == b"\x89PNG"
    assert "](docs/demo.png)" in README.read_text()


def test_readme_dpglm_commands_run_as_written(tmp_path, monkeypatch, capsys):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "data").symlink_to(ROOT / "tests" / "data")
    monkeypatch.chdir(tmp_path)
    ran = []
    for command in commands():
        if command.startswith("pip ") or command == "pytest":
            continue
        words = shlex.split(command)
        assert words[0] == "dpglm", f"the README shows a command this test does not run: {command}"
        status = main(words[1:])
        out, err = capsys.readouterr()
        if words[1] == "compare" and not have_matplotlib():
            # without the plot extra (the README installs it) compare's figure says so
            assert status == 1 and "pip install 'dpglm[plot]'" in err and "--no-plot" in err
        else:
            assert status == 0, f"{command}\n{err}"
        if words[1] == "demo" and not have_matplotlib():
            # the demo runs without it: the table, and how to get the figure
            assert "pip install 'dpglm[plot]'" in out
        ran.append((words[1], out))
    assert [name for name, _ in ran][:1] == ["demo"]
    assert {"demo", "fit", "report", "predict", "budget", "compare"} <= {n for n, _ in ran}
    for path in ("crime-model.json", "predictions.csv", "ridge.json"):
        assert (tmp_path / path).exists(), path
    if have_matplotlib():
        for path in ("dpglm-demo.png", "phishing-curves.png", "phishing-curves.csv"):
            assert (tmp_path / path).exists(), path
    shown = dict(ran)["budget"]
    assert "dataset 'crime'" in shown


@pytest.mark.parametrize("word", ["/tmp", "/work", "/home", "TODO", "FIXME", "XXX"])
def test_readme_speaks_of_the_project_only(word):
    assert word not in README.read_text()
