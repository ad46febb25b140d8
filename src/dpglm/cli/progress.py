"""The progress bar the ``dpglm`` command draws on stderr while it fits.

:class:`Progress` stays silent for the first :data:`dpglm.cli.PROGRESS_DELAY`
seconds, so that short commands print nothing, then redraws every
:data:`PROGRESS_INTERVAL` seconds from a background thread.
"""

from __future__ import annotations

import sys
import threading
import time

#: seconds between two redraws of the progress bar
PROGRESS_INTERVAL = 0.2


def _default_delay() -> float:
    # The command's setting, read when a bar is created (so that it can be changed
    # in one place, dpglm.cli, which imports this module first).
    from dpglm import cli

    return cli.PROGRESS_DELAY


class Progress:
    """A text progress bar on stderr that appears once the work has taken ``PROGRESS_DELAY`` s.

    With ``total`` it counts steps (:meth:`advance`); without, it shows the
    elapsed time. It redraws from a background thread, so that a long fit
    (whose numba kernels release the GIL) needs no callback.

    Parameters
    ----------
    label : str
    total : int, optional
    enabled : bool, default=True
        ``False`` (``--quiet``): draw nothing.
    stream : file, optional
        Default ``sys.stderr`` at creation.
    delay : float, optional
        Default :data:`dpglm.cli.PROGRESS_DELAY`, read at creation.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with Progress("fits", total=2, stream=out, delay=0.0) as bar:
    ...     bar.advance(2)
    >>> out.getvalue().strip().startswith("fits [########################] 2/2")
    True
    """

    width = 24

    def __init__(self, label, total=None, *, enabled=True, stream=None, delay=None):
        self.label = label
        self.total = total
        self.done = 0
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.delay = _default_delay() if delay is None else delay
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = None
        self._drawn = 0
        self._start = time.monotonic()

    def __enter__(self):
        self._start = time.monotonic()
        if self.enabled:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def advance(self, steps: int = 1) -> None:
        """Count ``steps`` more steps done."""
        self.done += steps

    def _run(self):
        while not self._stop.wait(PROGRESS_INTERVAL):
            if time.monotonic() - self._start >= self.delay:
                self._draw(final=False)

    def _draw(self, final):
        elapsed = time.monotonic() - self._start
        if self.total:
            filled = min(self.width, int(self.width * self.done / self.total))
            bar = "#" * filled + "-" * (self.width - filled)
            text = f"{self.label} [{bar}] {self.done}/{self.total}  {elapsed:.1f} s"
        elif final:
            text = f"{self.label} [{'#' * self.width}]  {elapsed:.1f} s"
        else:
            span = self.width - 3
            tick = int(elapsed / PROGRESS_INTERVAL) % (2 * span)
            at = tick if tick < span else 2 * span - tick
            bar = " " * at + "<=>" + " " * (span - at)
            text = f"{self.label} [{bar}]  {elapsed:.1f} s"
        with self._lock:
            self.stream.write("\r" + text.ljust(self._drawn))
            self.stream.flush()
            self._drawn = len(text)

    def __exit__(self, *exc_info):
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            if exc_info[0] is None and time.monotonic() - self._start >= self.delay:
                self._draw(final=True)
            if self._drawn:
                self.stream.write("\n")
                self.stream.flush()
        return False
