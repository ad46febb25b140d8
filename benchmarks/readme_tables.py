"""The generated tables of ``benchmarks/README.md``.

Each benchmark script owns one table, kept between the markers
``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``; rewriting it leaves the
prose around the markers as it is.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

README = Path(__file__).resolve().parent / "README.md"
HEADER = "# Benchmarks\n\nSpeed benchmarks and reproductions of the papers' experiments.\n"


def markers(name: str) -> tuple[str, str]:
    """The begin and end markers of table ``name``."""
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def replace_table(name: str, table: str, section: str | None = None, readme: Path = README):
    """Put ``table`` between the markers of ``name`` in ``readme``.

    Without the markers, ``section`` (a heading and its prose) is appended
    with the markers and the table after it; without a ``section`` either,
    the script stops and says which markers are missing.
    """
    begin, end = markers(name)
    text = readme.read_text() if readme.exists() else HEADER
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = f"{head}{begin}\n{table}\n{end}{tail}"
    elif section is None:
        raise SystemExit(f"{readme} has no {begin} ... {end} section")
    else:
        text = text.rstrip("\n") + "\n\n" + section + f"\n\n{begin}\n{table}\n{end}\n"
    readme.write_text(text)


def dataset_arguments(description: str, names) -> argparse.ArgumentParser:
    """The options of a benchmark over named datasets: where, which, quick, table, readme."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--datasets", type=Path, default=os.environ.get("DPGLM_DATASETS"))
    parser.add_argument(
        "--only", default=",".join(names), help="comma-separated names (default: all)"
    )
    parser.add_argument("--quick", action="store_true", help="epsilon 1 and one seed")
    parser.add_argument("--table", action="store_true", help="print the tables from the JSON")
    parser.add_argument(
        "--readme", action="store_true", help="with --table: also write them in README.md"
    )
    return parser


def show_table(name: str, text: str, section: str, readme: bool) -> int:
    """Print a benchmark's tables; with ``readme``, also write them in README.md."""
    print(text)
    if readme:
        replace_table(name, text, section=section)
    return 0


def measure_or_reload(argv, description: str, results: Path, measure, markdown, name, section):
    """The main of a benchmark that measures on the datasets, or only rewrites its table.

    ``measure(datasets)`` returns the report, saved as JSON in ``results``;
    with ``--table`` the saved report is read instead. Either way the
    report's ``markdown`` is printed and written between the markers ``name``
    of README.md (with ``section`` before them the first time).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--datasets", type=Path, default=os.environ.get("DPGLM_DATASETS"))
    parser.add_argument("--table", action="store_true", help="rewrite the README from the JSON")
    args = parser.parse_args(argv)
    if args.table:
        report = json.loads(results.read_text())
    else:
        if args.datasets is None:
            parser.error("give --datasets DIR (or set DPGLM_DATASETS)")
        report = measure(args.datasets)
        results.parent.mkdir(exist_ok=True)
        results.write_text(json.dumps(report, indent=1))
    text = markdown(report)
    print(text)
    replace_table(name, text, section=section)
    return 0
