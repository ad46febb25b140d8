"""Small text pieces of the command's output: durations, run counts, wrapped notes."""

from __future__ import annotations

import textwrap

#: the note on timing under the tables of ``dpglm demo`` and ``dpglm compare``
TIME_NOTE = (
    "time/fit is the mean: the first fit at each epsilon also calibrates the noise (cached "
    "for the next ones) and, on a machine's first run, compiles the numba kernels."
)


def format_duration(seconds: float) -> str:
    """A duration in milliseconds below one second, else in seconds (3 significant digits).

    Examples
    --------
    >>> format_duration(0.0123), format_duration(42.0)
    ('12.3 ms', '42 s')
    """
    if seconds < 1.0:
        return f"{seconds * 1000:.3g} ms"
    return f"{seconds:.3g} s"


def count_runs(count: int) -> str:
    """``"1 run"`` or ``"N runs"``.

    Examples
    --------
    >>> count_runs(1), count_runs(5)
    ('1 run', '5 runs')
    """
    return f"{count} run" if count == 1 else f"{count} runs"


def wrap_note(text: str, width: int = 92, indent: str = "  ") -> str:
    """A paragraph of the output, wrapped to ``width``; lines after the first are indented.

    Examples
    --------
    >>> print(wrap_note("one two three", width=8))
    one two
      three
    """
    return textwrap.fill(text, width=width, subsequent_indent=indent, break_on_hyphens=False)
