"""The results of the reproduction scripts: one JSON file, one entry per (problem, method).

Runs of one script for different problems or methods may overlap (separate
processes), so every save re-reads the file under an exclusive lock and merges
its entry into what is there.
"""

from __future__ import annotations

import fcntl
import json
import platform
from pathlib import Path

import numpy as np


def spread(values) -> dict:
    """Mean, min and max of the runs of one configuration, and the runs themselves."""
    return {
        "mean": float(np.mean(values)),
        "min": float(np.min(values)),
        "max": float(np.max(values)),
        "runs": list(values),
    }


def results_path(results: Path, quick: bool = False) -> Path:
    """``results``, or its ``_quick`` sibling for the smoke-test runs."""
    return results.with_name(results.stem + "_quick.json") if quick else results


def load_results(path: Path) -> dict:
    """The saved results, or an empty set of problems."""
    if path.exists() and path.stat().st_size:
        return json.loads(path.read_text())
    return {"problems": {}}


def save_entry(path: Path, name, meta, method, rows, protocol=None) -> dict:
    """Merge the ``rows`` of ``method`` on problem ``name`` (and its ``meta``) into ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        text = handle.read()
        results = json.loads(text) if text.strip() else {"problems": {}}
        entry = results["problems"].setdefault(name, {"methods": {}})
        entry.update(meta)
        entry["methods"][method] = rows
        if protocol is not None:
            results["protocol"] = protocol
        results["machine"] = {"python": platform.python_version(), "platform": platform.platform()}
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps(results, indent=1))
    return results


def finish(path: Path, names, table, leaks) -> int:
    """Print the tables of the datasets just run; the exit status of a benchmark run.

    0 when every cell ran, 1 when some cell recorded an error, 2 when some fit leaked.
    """
    import sys

    results = load_results(path)
    print()
    print(table({**results, "problems": {n: results["problems"][n] for n in names}}))
    print(f"\nsaved in {path}")
    if leaks:
        print("\nPRIVACY LEAKS:\n  " + "\n  ".join(leaks), file=sys.stderr)
        return 2
    errors = [
        n
        for n in names
        for row in results["problems"][n]["methods"].values()
        for cell in row["epsilons"].values()
        if cell.get("error")
    ]
    return 1 if errors else 0


def version_lines(results) -> list:
    """One line per dpglm version the results were measured with (commit, local changes)."""
    versions = {
        (
            e["dpglm"]["version"],
            (e["dpglm"]["commit"] or "?")[:10],
            bool(e["dpglm"]["changed_under_src"]),
        )
        for e in results["problems"].values()
        if "dpglm" in e
    }
    return [
        f"\ndpglm {version} at {commit}{' with local changes' if dirty else ''}."
        for version, commit, dirty in sorted(versions)
    ]
