"""Privacy-leak warnings: shown to the user, and recorded by the fit that raised them.

A fit that uses a value computed from the data without privacy (e.g.
smoothness constants read from the raw features) calls
:func:`warn_privacy_leak`: the user sees a
:class:`~dpglm.exceptions.PrivacyLeakWarning` as usual, and every
:func:`collect_privacy_warnings` block open around the call records the
message for the fit's report.

The record does not go through the :mod:`warnings` module, whose filters and
``showwarning`` hook are global to the process: with
``warnings.catch_warnings``, fits running at the same time in threads (joblib
or Dask threads, a thread pool) would record each other's warnings, or lose
theirs. The open blocks are kept in a :class:`contextvars.ContextVar`, so each
thread (and each asyncio task) sees only its own: a report lists exactly the
leaks of its fit, whatever the user's warning filters are (even "ignore").

Examples
--------
>>> import warnings
>>> from dpglm.privacy.leaks import collect_privacy_warnings, warn_privacy_leak
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")  # not shown, still recorded
...     with collect_privacy_warnings() as leaks:
...         warn_privacy_leak("M_j from raw data")
>>> leaks
['M_j from raw data']
"""

from __future__ import annotations

import contextlib
import contextvars
import warnings

from dpglm.exceptions import PrivacyLeakWarning

__all__ = ["collect_privacy_warnings", "warn_privacy_leak"]


class _Collector:
    __slots__ = ("leaks", "show")

    def __init__(self, show: bool):
        self.leaks: list = []
        self.show = show


#: the collectors open in the current context, innermost last
_OPEN: contextvars.ContextVar[tuple] = contextvars.ContextVar(
    "dpglm_privacy_leak_collectors", default=()
)


def warn_privacy_leak(message: str, *, stacklevel: int = 1) -> None:
    """Warn :class:`~dpglm.exceptions.PrivacyLeakWarning` and record it in the open collectors.

    Every :func:`collect_privacy_warnings` block open in the current thread
    (or task) records ``message``; the warning is then issued with
    :func:`warnings.warn`, unless a block opened with ``show=False`` encloses
    the call.

    Parameters
    ----------
    message : str
        What was read from the data without privacy.
    stacklevel : int, default=1
        As for :func:`warnings.warn`, counted from the caller of this function.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as shown:
    ...     warnings.simplefilter("always")
    ...     warn_privacy_leak("column maxima read from the data")
    >>> [(w.category.__name__, str(w.message)) for w in shown]
    [('PrivacyLeakWarning', 'column maxima read from the data')]
    """
    message = str(message)
    collectors = _OPEN.get()
    for collector in collectors:
        collector.leaks.append(message)
    if all(collector.show for collector in collectors):
        warnings.warn(message, PrivacyLeakWarning, stacklevel=stacklevel + 1)


@contextlib.contextmanager
def collect_privacy_warnings(*, show: bool = True):
    """Record the privacy leaks reported inside the block, in this thread only.

    Yields a list that receives the message of every :func:`warn_privacy_leak`
    call made in the block by the current thread (or asyncio task), in
    order, nested blocks included; other threads' leaks never reach it.
    Blocks nest: an enclosing block records the leaks of the inner ones too.

    Parameters
    ----------
    show : bool, default=True
        Whether the leaks are also issued as warnings for the user; False
        records them silently (e.g. a dry run whose leaks are reported
        elsewhere).

    Examples
    --------
    >>> with collect_privacy_warnings(show=False) as outer:
    ...     with collect_privacy_warnings() as inner:
    ...         warn_privacy_leak("a")
    ...     warn_privacy_leak("b")
    >>> inner, outer
    (['a'], ['a', 'b'])
    """
    collector = _Collector(show)
    token = _OPEN.set((*_OPEN.get(), collector))
    try:
        yield collector.leaks
    finally:
        _OPEN.reset(token)
