"""Opening data files: format from the extension, bytes, gzip, text decoding."""

from __future__ import annotations

import gzip
import io
import os
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dpglm.exceptions import UnreadableFileError

#: File extensions :func:`dpglm.data.load` recognises, and the format of each.
FORMATS = {
    ".csv": "csv",
    ".csv.gz": "csv",
    ".svm": "svmlight",
    ".svm.gz": "svmlight",
    ".libsvm": "svmlight",
    ".libsvm.gz": "svmlight",
    ".parquet": "parquet",
    ".pq": "parquet",
}

SUPPORTED_EXTENSIONS = tuple(FORMATS)


def guess_format(path: str | os.PathLike[str]) -> str:
    """The format of a data file, from its extension (case-insensitive).

    Raises
    ------
    UnreadableFileError
        The extension is not one of :data:`SUPPORTED_EXTENSIONS`.

    Examples
    --------
    >>> guess_format("train.SVM.gz"), guess_format("data.csv"), guess_format("t.pq")
    ('svmlight', 'csv', 'parquet')
    """
    name = Path(path).name.lower()
    for ext in sorted(FORMATS, key=len, reverse=True):
        if name.endswith(ext):
            return FORMATS[ext]
    raise UnreadableFileError(
        f"cannot read {os.fspath(path)!r}: unknown file extension; supported extensions "
        f"are {', '.join(SUPPORTED_EXTENSIONS)}"
    )


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The content of a file, decompressed when its name ends in ``.gz``.

    Raises
    ------
    UnreadableFileError
        The file is missing, a directory, not readable, or not valid gzip.

    Examples
    --------
    >>> import gzip, os, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "a.csv.gz")
    ...     with gzip.open(path, "wb") as f:
    ...         _ = f.write(b"x,y\\n1,2\\n")
    ...     read_bytes(path)
    b'x,y\\n1,2\\n'
    """
    with open_binary(path) as f:
        raw = f.read()
    if is_gzip(path):
        raw = gunzip(raw, path)
    return raw


def open_binary(path: str | os.PathLike[str]) -> io.BufferedReader:
    """Open a file for reading bytes; a missing or unreadable file names the path.

    Examples
    --------
    >>> open_binary("/no/such/file.csv")
    Traceback (most recent call last):
    ...
    dpglm.exceptions.UnreadableFileError: cannot read '/no/such/file.csv': No such file or directory
    """  # noqa: E501
    try:
        return open(path, "rb")
    except OSError as err:
        raise UnreadableFileError(
            f"cannot read {os.fspath(path)!r}: {err.strerror or err}"
        ) from err


def is_gzip(path: str | os.PathLike[str]) -> bool:
    """Whether the file's name says it is gzip-compressed (``.gz``, any case).

    Examples
    --------
    >>> is_gzip("d.CSV.GZ"), is_gzip("d.csv")
    (True, False)
    """
    return os.fspath(path).lower().endswith(".gz")


@contextmanager
def open_text(path: str | os.PathLike[str]) -> Iterator[io.TextIOWrapper]:
    """A file as UTF-8 text (decompressed when gzip), read line by line: a context manager.

    A byte-order mark is skipped and line endings are kept, as :mod:`csv`
    wants them. Decoding and decompression happen as the text is read, so a
    bad byte or corrupt gzip data raises there (:class:`UnicodeDecodeError`,
    :class:`OSError` or :class:`EOFError`), not here.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp, "a.csv")
    ...     _ = path.write_bytes(b"\\xef\\xbb\\xbfx,y\\r\\n1,2\\r\\n")
    ...     with open_text(path) as lines:
    ...         list(lines)
    ['x,y\\r\\n', '1,2\\r\\n']
    """
    with open_binary(path) as raw:
        stream = gzip.GzipFile(fileobj=raw) if is_gzip(path) else raw
        with io.TextIOWrapper(stream, encoding="utf-8-sig", newline="") as text:
            yield text


def gunzip(raw: bytes, path: str | os.PathLike[str]) -> bytes:
    """Decompress gzip data read from ``path``; corrupt data names the path.

    Examples
    --------
    >>> import gzip
    >>> gunzip(gzip.compress(b"abc"), "f.gz")
    b'abc'
    >>> gunzip(b"not gzip", "f.gz")
    Traceback (most recent call last):
    ...
    dpglm.exceptions.UnreadableFileError: cannot read 'f.gz': corrupt or truncated gzip data (Not a gzipped file (b'no'))
    """  # noqa: E501
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as err:
        raise UnreadableFileError(
            f"cannot read {os.fspath(path)!r}: corrupt or truncated gzip data ({err})"
        ) from err


def decode_text(raw: bytes, path: str | os.PathLike[str]) -> str:
    """Decode UTF-8 text (a byte-order mark is allowed); bad bytes name their line.

    Examples
    --------
    >>> decode_text(b"a,b\\n1,2\\n", "f.csv")
    'a,b\\n1,2\\n'
    >>> decode_text(b"a,b\\n1,\\xff\\n", "f.csv")
    Traceback (most recent call last):
    ...
    dpglm.exceptions.UnreadableFileError: cannot read 'f.csv': line 2 is not valid UTF-8 text (byte 0xff at offset 6)
    """  # noqa: E501
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise UnreadableFileError(
            f"cannot read {os.fspath(path)!r}: line {line} is not valid UTF-8 text "
            f"(byte {raw[err.start]:#04x} at offset {err.start})"
        ) from err
