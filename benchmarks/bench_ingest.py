"""Ingestion: ``dpglm.data.load`` against pandas and pyarrow, on CSV files and a Parquet folder.

A synthetic CSV file of 500,000 rows of 20 numbers (19 features ``f0`` ...
``f18`` and a target ``y``, standard normal, seed 0, written by Arrow's CSV
writer with the shortest decimal that reads back to the same float64: about
200 MB) is written once to a temporary directory, with its gzip copy (level
6); ``--large`` adds one of 5,000,000 rows (about 2 GB). A directory of 10
Parquet files (written by ``pyarrow.parquet.write_table`` with its defaults)
of 100,000 rows of 20 numbers each, drawn the same way (about 200 MB in all),
is read too (``--directory``: that directory only). The temporary files are
deleted at the end.

Each reader reads each file in a fresh interpreter, with its default options:

* **dpglm**: ``dpglm.data.load(path)``, the whole validated dataset (X as a
  Fortran-ordered float64 matrix, y, every check);
* **pandas**: ``pandas.read_csv(path)`` (a DataFrame; C parser);
* **pyarrow**: ``pyarrow.csv.read_csv(path)`` (an Arrow table, types inferred).

The directory is read by ``dpglm.data.load(directory)`` (the files one after
the other, a batch of rows at a time, into one matrix) and by
**pyarrow.dataset**: ``pyarrow.dataset.dataset(directory).to_table()`` (one
Arrow table of every file, read in parallel).

Time: ``time.perf_counter`` around the call, best of 3 after a warm-up read
(the first read, which also starts Arrow's threads and touches fresh memory).

Memory: the peak resident set size of the interpreter during the warm-up read
minus its value after the imports, that is before the first read. The peak
is the kernel's high-water mark of the process's memory, ``VmHWM`` in
``/proc/self/status``: the figure ``resource.getrusage(RUSAGE_SELF).ru_maxrss``
gives, but of this interpreter alone (on Linux, ``ru_maxrss`` of a child keeps
its parent's peak across fork and exec, which hid every read smaller than the
script that starts the workers). ``tracemalloc`` would see neither Arrow's
allocations nor pandas' C parser. The imports are those the read needs (for
dpglm: ``dpglm.data``, ``pyarrow.csv`` and ``pyarrow.compute``, and
``pyarrow.parquet`` for the directory), so a library's code is not counted as
memory of the read. Both are compared with
the float64 array of the numbers (rows x 20 x 8 bytes). The dpglm worker also
checks, after its timed reads, that its X and y equal the columns pyarrow
reads (pyarrow.dataset's, for the directory).

Targets (the issue): dpglm within 1.5x of pyarrow's time and at most 2x the
float64 array in memory. The machine's load average is recorded with each
file: other processes slow the reads down.

Usage::

    python benchmarks/bench_ingest.py                  # 200 MB, results/bench_ingest.json
    python benchmarks/bench_ingest.py --large          # also the 2 GB file
    python benchmarks/bench_ingest.py --quick          # 50,000 rows, ..._quick.json
    python benchmarks/bench_ingest.py --directory      # the Parquet directory only
    python benchmarks/bench_ingest.py --table --readme # the README table from the JSON
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from readme_tables import show_table
from result_store import load_results, results_path, save_entry

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "bench_ingest.json"

COLUMNS = 20
SIZES = {"quick": 50_000, "standard": 500_000, "large": 5_000_000}
CHUNK_ROWS = 500_000  # rows generated and written at a time
GZIP_LEVEL = 6
REPEATS = 3
READERS = ("dpglm", "pandas", "pyarrow")
#: the directory of Parquet files: how many files, and the readers of a directory
PARQUET_FILES = 10
DIRECTORY_READERS = ("dpglm", "pyarrow.dataset")

#: the issue's targets: time against pyarrow's, memory against the float64 array
TIME_TARGET, MEMORY_TARGET = 1.5, 2.0


# -- the files --------------------------------------------------------------------------


def write_csv(path: Path, rows: int) -> None:
    """The synthetic file: a header, then ``rows`` rows of standard normal numbers."""
    import pyarrow as pa
    import pyarrow.csv as pv

    names = [f"f{j}" for j in range(COLUMNS - 1)] + ["y"]
    rng = np.random.default_rng(0)
    options = pv.WriteOptions(include_header=False)
    with open(path, "wb") as f:
        f.write((",".join(names) + "\n").encode())
        for start in range(0, rows, CHUNK_ROWS):
            block = rng.standard_normal((min(CHUNK_ROWS, rows - start), COLUMNS))
            pv.write_csv(pa.table(dict(zip(names, block.T, strict=True))), f, options)


def write_parquet_directory(folder: Path, rows: int) -> None:
    """``rows`` standard normal rows of the columns of :func:`write_csv`, in
    :data:`PARQUET_FILES` Parquet files ``part-00.parquet``, ``part-01.parquet``, ..."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [f"f{j}" for j in range(COLUMNS - 1)] + ["y"]
    rng = np.random.default_rng(0)
    folder.mkdir()
    for k in range(PARQUET_FILES):
        block = rng.standard_normal((rows // PARQUET_FILES, COLUMNS))
        table = pa.table(dict(zip(names, block.T, strict=True)))
        pq.write_table(table, folder / f"part-{k:02d}.parquet")


def write_gzip(path: Path) -> Path:
    target = path.with_name(path.name + ".gz")
    with open(path, "rb") as source, gzip.open(target, "wb", compresslevel=GZIP_LEVEL) as out:
        shutil.copyfileobj(source, out, 1 << 24)
    return target


# -- one reader in one interpreter --------------------------------------------------------


def reader(name: str):
    """Import what reader ``name`` needs; return the read."""
    if name == "dpglm":
        import pyarrow.compute
        import pyarrow.csv
        import pyarrow.parquet

        import dpglm.data

        return dpglm.data.load
    if name == "pyarrow.dataset":
        import pyarrow.dataset

        return lambda path: pyarrow.dataset.dataset(path).to_table()
    if name == "pandas":
        import pandas

        return pandas.read_csv
    import pyarrow.csv

    return pyarrow.csv.read_csv


def peak_mib() -> float:
    """Peak resident memory of this interpreter so far, in MiB (see the module's docstring)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # KiB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux


def worker(name: str, path: str) -> dict:
    read = reader(name)
    baseline = peak_mib()
    start = time.perf_counter()
    result = read(path)
    warmup = time.perf_counter() - start
    peak = peak_mib()
    del result
    seconds = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        result = read(path)
        seconds.append(time.perf_counter() - start)
        del result
    row = {"seconds": seconds, "warmup_seconds": warmup, "baseline_mib": baseline}
    row |= {"peak_mib": peak, "memory_mib": peak - baseline}
    if name == "dpglm":
        row["same_as_pyarrow"] = same_as_pyarrow(read(path), path)
    return row


def same_as_pyarrow(dataset, path: str) -> bool:
    import pyarrow.csv
    import pyarrow.dataset

    if os.path.isdir(path):
        table = pyarrow.dataset.dataset(path).to_table()
    else:
        table = pyarrow.csv.read_csv(path)
    columns = [np.asarray(c) for c in table.columns]
    return bool(
        all(np.array_equal(dataset.X[:, k], columns[k]) for k in range(COLUMNS - 1))
        and np.array_equal(dataset.y, columns[-1])
    )


def measure(name: str, path: Path) -> dict:
    """Reader ``name`` on ``path``, in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, __file__, "--worker", name, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.splitlines()[-1])


# -- the table --------------------------------------------------------------------------


def table(results: dict) -> str:
    machine = results.get("machine", {})
    lines = [
        f"Best of {REPEATS} reads after a warm-up read, each reader in a fresh interpreter; "
        "memory is the peak resident set size during the first read minus the size after "
        f"the imports (`VmHWM`). Targets: dpglm within {TIME_TARGET:g}x pyarrow's time, "
        f"at most {MEMORY_TARGET:g}x the float64 array. "
        f"{machine.get('cpu', '?')}, {machine.get('logical_cpus', '?')} logical CPUs; "
        f"pyarrow {machine.get('pyarrow', '?')}, pandas {machine.get('pandas', '?')}. "
        "x pyarrow: against pyarrow.dataset for the Parquet directory.",
        "",
        "| file | reader | time | x pyarrow | memory | x float64 array | load average |",
        "|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for name, entry in results["problems"].items():
        methods = entry["methods"]
        array_mib = entry["rows"] * COLUMNS * 8 / 2**20
        reference = min(methods.get("pyarrow", methods.get("pyarrow.dataset"))["seconds"])
        for method in (m for m in (*READERS, *DIRECTORY_READERS[1:]) if m in methods):
            row = methods[method]
            best = min(row["seconds"])
            lines.append(
                f"| {name} ({entry['mb']:.0f} MB, float64 array {array_mib:.0f} MiB) | {method} "
                f"| {best:.2f} s | {best / reference:.2f} | {row['memory_mib']:.0f} MiB "
                f"| {row['memory_mib'] / array_mib:.2f} | {entry['load_average']:.2f} |"
            )
        dpglm = methods["dpglm"]
        met = (
            min(dpglm["seconds"]) <= TIME_TARGET * reference
            and dpglm["memory_mib"] <= MEMORY_TARGET * array_mib
            and dpglm["same_as_pyarrow"]
        )
        verdicts.append(f"{name}: {'PASS' if met else 'FAIL'}")
    lines += ["", "Targets (dpglm's time, memory, and its numbers equal to pyarrow's): "]
    lines[-1] += "; ".join(verdicts) + "."
    return "\n".join(lines)


SECTION = """## CSV ingestion (`bench_ingest.py`)

`dpglm.data.load` on a CSV file of 500,000 rows of 20 numbers (about 200 MB, synthetic,
standard normal, seed 0) and its gzip copy, against `pandas.read_csv` and
`pyarrow.csv.read_csv` with their defaults; dpglm returns the validated dataset (X as a
Fortran-ordered float64 matrix and y), pandas a DataFrame and pyarrow an Arrow table. A
directory of 10 Parquet files (1,000,000 such rows in all, about 200 MB) is read by
`dpglm.data.load(directory)` and by `pyarrow.dataset.dataset(directory).to_table()`,
which keeps Arrow's decoded buffers as they are (reading the files in parallel), where
dpglm copies them into one Fortran-ordered matrix and checks every value. The
files are written to a temporary directory and deleted after the run. Regenerate with
`python benchmarks/bench_ingest.py` (`--large` adds a 2 GB file, `--directory` runs the
directory only), then `--table --readme`."""


# -- main -------------------------------------------------------------------------------


def machine() -> dict:
    import pandas
    import pyarrow

    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
        "pandas": pandas.__version__,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also a file of about 2 GB")
    parser.add_argument("--quick", action="store_true", help="a file of 50,000 rows only")
    parser.add_argument(
        "--directory", action="store_true", help="the directory of Parquet files only"
    )
    parser.add_argument("--table", action="store_true", help="print the table from the JSON")
    parser.add_argument("--readme", action="store_true", help="with --table: into README.md")
    parser.add_argument("--worker", nargs=2, metavar=("READER", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return 0
    path = results_path(RESULTS, args.quick)
    if args.table:
        return show_table("bench_ingest", table(load_results(path)), SECTION, args.readme)
    from bench_defaults import provenance

    sizes = ["quick"] if args.quick else ["standard"] + (["large"] if args.large else [])
    if args.directory:
        sizes = []
    protocol = {"columns": COLUMNS, "repeats": REPEATS, "gzip_level": GZIP_LEVEL}
    names = []
    with tempfile.TemporaryDirectory(prefix="bench_ingest_") as tmp:
        for size in sizes:
            rows = SIZES[size]
            plain = Path(tmp) / f"{size}.csv"
            write_csv(plain, rows)
            compressed = write_gzip(plain)
            for file in (plain, compressed):
                name = f"{rows:,} x {COLUMNS}{', gzip' if file is compressed else ''}"
                meta = {"rows": rows, "mb": file.stat().st_size / 1e6, "dpglm": provenance()}
                meta["load_average"] = os.getloadavg()[0]
                for method in READERS:
                    print(f"{name}: {method}", flush=True)
                    save_entry(path, name, meta, method, measure(method, file), protocol)
                names.append(name)
            plain.unlink()
            compressed.unlink()
        rows = 2 * SIZES["quick" if args.quick else "standard"]
        folder = Path(tmp) / "parquet"
        write_parquet_directory(folder, rows)
        name = f"{PARQUET_FILES} Parquet files, {rows:,} x {COLUMNS}"
        size = sum(f.stat().st_size for f in folder.iterdir())
        meta = {"rows": rows, "mb": size / 1e6, "dpglm": provenance()}
        meta["load_average"] = os.getloadavg()[0]
        for method in DIRECTORY_READERS:
            print(f"{name}: {method}", flush=True)
            save_entry(path, name, meta, method, measure(method, folder), protocol)
        names.append(name)
    results = load_results(path)
    results["machine"] = machine()
    path.write_text(json.dumps(results, indent=1))
    print()
    print(table({**results, "problems": {n: results["problems"][n] for n in names}}))
    print(f"\nsaved in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
