"""Checks on what a command will write, made before it fits anything or spends a budget."""

from __future__ import annotations

from pathlib import Path


def check_output(path) -> Path:
    """Refuse an output path whose directory does not exist, before any budget is spent.

    Parameters
    ----------
    path : str or os.PathLike
        Where the command will write a file.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        The directory of ``path`` does not exist.
    IsADirectoryError
        ``path`` is a directory.

    Examples
    --------
    >>> import tempfile
    >>> check_output(tempfile.gettempdir())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    IsADirectoryError: cannot write '...': it is a directory
    """
    path = Path(path)
    parent = path.parent
    if not parent.is_dir():
        raise FileNotFoundError(
            f"cannot write {str(path)!r}: the directory {str(parent)!r} does not exist"
        )
    if path.is_dir():
        raise IsADirectoryError(f"cannot write {str(path)!r}: it is a directory")
    return path


def require_figure(args) -> None:
    """Fail before any fit when the figure cannot be drawn (matplotlib is missing).

    Parameters
    ----------
    args : argparse.Namespace
        The arguments of ``dpglm compare``; nothing is checked with
        ``--no-plot``. (``dpglm demo`` runs without matplotlib and prints the
        table only.)

    Raises
    ------
    MissingDependencyError
        matplotlib is not installed; the message names the command and
        ``--no-plot``.
    """
    if not args.no_plot:
        from dpglm.exceptions import MissingDependencyError
        from dpglm.plotting import require_matplotlib

        try:
            require_matplotlib()
        except MissingDependencyError as err:
            raise MissingDependencyError(
                f"dpglm {args.command} draws a figure: {err}; or pass --no-plot"
            ) from err
