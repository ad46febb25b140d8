"""The data rows of a CSV file, parsed by Arrow into float64 and text columns.

pyarrow's reader parses a piece of the file at a time (a few MiB cut at a line
break, in parallel blocks) and each piece's numbers are copied into the
Fortran-ordered matrix the reader returns before the next piece is read: the
parse holds a piece, never a table of the whole file. Columns are read as
float64 (Arrow's parser gives the value NumPy gives for every number it
accepts, and accepts fewer spellings) or, when asked or when Arrow refuses a
cell, as text. No cell is null (``null_values=[]``): an empty cell or ``NA``
stays text, for :mod:`dpglm.data.columns` to name.

With quoting off, the common case of a file without quotes needs nothing
else; a field in quotes is then text, unquoted here once every quoted field
is known to be quoted as :mod:`csv` wants. A file whose quoted fields hold
commas or line breaks cannot be cut at line breaks: read with quoting on, it
is parsed whole. :mod:`dpglm.data.csv_reader` decides which, and names rows.
"""

from __future__ import annotations

import gzip
import itertools
import os
import re
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import numpy as np

from dpglm.data.files import is_gzip, open_binary

#: A field wholly in quotes, its own quotes doubled: what :mod:`csv` accepts as quoted.
_QUOTED_FIELD = r'^"([^"]|"")*"$'

#: Arrow's message for a cell a column's type refused; the column is its position.
_CONVERSION_ERROR = re.compile(r"In CSV column #(\d+): .*conversion error")

#: Arrow parses a file in blocks of this many bytes at first, in parallel, a piece
#: of 8 blocks (cut at a line break) at a time; each piece's rows are copied out
#: before the next piece is read, so memory holds X and a piece, never the table.
#: Measured on 500,000 x 20 numbers (benchmarks/bench_ingest.py): larger pieces
#: hold more memory and are no faster. A row longer than a block makes them larger.
_BLOCK_SIZE = 1 << 19
_BLOCKS_PER_PIECE = 8
_ROWS_PER_BLOCK = 64


class Layout(NamedTuple):
    """Where a CSV file's data rows are and how Arrow is to read them."""

    path: str | os.PathLike[str]
    shown: str  # how messages name the file
    skip: int  # lines before the first data row
    width: int  # columns
    rows: int  # an estimate, a little more than the rows
    block: int  # Arrow's block size, more than the longest row
    quoted: bool  # whether Arrow reads quotes (else they are text, unquoted afterwards)

    @classmethod
    def of(cls, path: str | os.PathLike[str], shown: str, skip: int, width: int) -> Layout:
        """The layout of a file, its rows and block size guessed from its first MiB."""
        return cls(path, shown, skip, width, *_sample(path), quoted=False)


class ArrowParseError(Exception):
    """Arrow could not read the file as asked: :mod:`csv` is to say why, or to read it."""


def read_columns(
    layout: Layout, numbers: list[int], text: set[int]
) -> tuple[np.ndarray, dict[int, Any]]:
    """The data rows: columns ``numbers`` as float64, the others as Arrow strings.

    Parameters
    ----------
    layout : Layout
    numbers : list of int
        The columns (positions in the file) of the matrix returned, in order.
    text : set of int
        Columns to read as text.

    Returns
    -------
    matrix : ndarray of float64, Fortran-ordered
        Column ``k`` is the file's column ``numbers[k]``; it is left unset
        when that column is read as text: in ``text``, or with a cell Arrow
        does not read as a number.
    strings : dict of int to ndarray of str
        The text columns, by their position in the file; with quoting off,
        quoted fields are unquoted.

    Raises
    ------
    ArrowParseError
        Arrow cannot read the file: a row it cannot split, or, quoting off, a
        field in quotes not quoted as :mod:`csv` wants (a comma or a line
        break split it).

    Examples
    --------
    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "t.csv")
    >>> with open(path, "w") as f:
    ...     _ = f.write('a,b,y\\n1.5,"x",yes\\n2,True,no\\n')
    >>> matrix, strings = read_columns(Layout.of(path, "t.csv", 1, 3), [0, 1], {2})
    >>> matrix[:, 0]
    array([1.5, 2. ])
    >>> strings[1], strings[2]
    (array(['x', 'True'], dtype='<U4'), array(['yes', 'no'], dtype='<U3'))
    """
    import pyarrow as pa

    text = set(text)
    while True:
        try:
            return _convert_pieces(layout, numbers, text)
        except _ConversionError as refused:
            text |= refused.columns  # read from the start again, with these as text
        except (pa.ArrowException, OSError) as err:
            if "straddles two block boundaries" not in str(err):
                raise ArrowParseError(str(err)) from err
            layout = layout._replace(block=4 * layout.block)  # a row longer than a block


class _ConversionError(Exception):
    """Arrow refused to convert a cell to float64: these columns are to be read as text."""

    def __init__(self, columns: set[int]) -> None:
        super().__init__(columns)
        self.columns = columns


def _convert_pieces(
    layout: Layout, numbers: list[int], text: set[int]
) -> tuple[np.ndarray, dict[int, Any]]:
    import pyarrow as pa

    read = sorted({*numbers, *text})  # the file's columns a table holds, in order
    position = {j: i for i, j in enumerate(read)}
    # Which column of a table fills which column of the matrix.
    fills = [(position[j], k) for k, j in enumerate(numbers) if j not in text]
    matrix = _GrowingColumns(len(numbers), layout.rows)
    chunks: dict[int, list[Any]] = {j: [] for j in text}
    for table in _arrow_tables(layout, read, text):
        for batch in table.to_batches():  # one a block
            columns = batch.columns
            matrix.append([(k, _float64_view(columns[i])) for i, k in fills], batch.num_rows)
            for j in text:
                chunks[j].append(columns[position[j]])
    strings = {j: pa.chunked_array(c, pa.string()) for j, c in chunks.items()}
    if not layout.quoted:
        strings = {j: _unquote(c) for j, c in strings.items()}
    result = matrix.result()
    for k, j in enumerate(numbers):
        # Quoted numbers ("1.5"), once unquoted: Arrow's cast reads fewer spellings than
        # NumPy, the same value from each, and a column of finite ones is not text.
        values = _finite_numbers(strings[j]) if j in strings else None
        if values is not None:
            result[:, k] = values
            del strings[j]
    # As NumPy strings, which dpglm.data.columns reads (Arrow's to_numpy would import pandas).
    return result, {j: np.array(c.to_pylist(), dtype=str) for j, c in strings.items()}


def _arrow_tables(layout: Layout, columns: list[int], text: set[int]) -> Iterator[Any]:
    """Arrow tables of ``columns`` of the data rows, piece after piece; ``text`` as strings.

    Raises
    ------
    _ConversionError
        A cell of a float64 column is not a number Arrow reads.
    """
    import pyarrow as pa
    import pyarrow.csv as pv

    # Columns are named by their position: the header's names may repeat or be empty.
    names = [str(j) for j in range(layout.width)]
    types = {names[j]: pa.string() if j in text else pa.float64() for j in columns}
    parse = pv.ParseOptions(
        quote_char='"' if layout.quoted else False, newlines_in_values=layout.quoted
    )
    source = pa.input_stream(
        os.fspath(layout.path), compression="gzip" if is_gzip(layout.path) else None
    )
    # A quoted field may hold a line break, so a file read with quotes is not cut.
    pieces = [source] if layout.quoted else _pieces(source, _BLOCKS_PER_PIECE * layout.block)
    skip = layout.skip
    with source:
        for piece in pieces:
            read = pv.ReadOptions(skip_rows=skip, column_names=names, block_size=layout.block)
            try:
                yield _read_piece(piece, read, parse, types)
            except pa.ArrowInvalid as err:
                refused = _CONVERSION_ERROR.match(str(err))
                if not refused:
                    raise
                columns = {int(refused.group(1))}
                if not layout.quoted:
                    # Every column of the piece Arrow refuses, to read the file once more,
                    # not once for each (in a file of quoted numbers, every column).
                    table = _read_piece(piece, read, parse, dict.fromkeys(types, pa.string()))
                    columns |= {int(c) for c in table.column_names if not _all_numbers(table[c])}
                raise _ConversionError(columns) from err
            skip = 0


def _read_piece(piece: Any, read: Any, parse: Any, types: dict[str, Any]) -> Any:
    import pyarrow as pa
    import pyarrow.csv as pv

    convert = pv.ConvertOptions(
        column_types=types,
        include_columns=list(types),
        # No cell is null: an empty cell or "NA" is text, named as missing later.
        null_values=[],
        strings_can_be_null=False,
    )
    # Measured: the system allocator holds less memory than Arrow's own, piece after piece.
    pool = pa.system_memory_pool()
    return pv.read_csv(
        piece, read_options=read, parse_options=parse, convert_options=convert, memory_pool=pool
    )


def _all_numbers(values: Any) -> bool:
    return _finite_numbers(values) is not None


def _finite_numbers(values: Any) -> np.ndarray | None:
    """Arrow strings cast to float64, or None if a cell is not a finite number Arrow reads."""
    import pyarrow as pa

    try:
        numbers = values.cast(pa.float64()).combine_chunks()
    except pa.ArrowInvalid:
        return None
    numbers = _float64_view(numbers) if len(numbers) else np.empty(0)
    return numbers if np.isfinite(numbers).all() else None


def _pieces(source: Any, size: int) -> Iterator[Any]:
    """The bytes of ``source`` in pieces of about ``size`` bytes, each ending a line.

    While Arrow parses a piece, the next one is read (and decompressed, which
    takes longer than parsing) by another thread, into the other of two
    buffers. A piece is a view of its buffer, valid until the next is asked for.
    """
    import pyarrow as pa

    def fill(buffer: bytearray, start: int) -> int:
        return start + source.readinto(memoryview(buffer)[start : start + size])

    buffers = [bytearray(2 * size), bytearray(2 * size)]
    with ThreadPoolExecutor(1) as reader:
        ahead = reader.submit(fill, buffers[0], 0)
        rest = 0  # bytes of an unfinished line at the start of the buffer
        for turn in itertools.count():
            buffer, end = buffers[turn % 2], ahead.result()
            if end == rest:
                break
            # Lines end in "\n", "\r\n" or "\r"; a "\n" left at the start of the next
            # piece is a blank line, which Arrow skips.
            cut = max(buffer.rfind(b"\n", 0, end), buffer.rfind(b"\r", 0, end)) + 1
            rest = end - cut
            if len(buffers[(turn + 1) % 2]) < rest + size:
                buffers[(turn + 1) % 2] = bytearray(rest + 2 * size)  # a line longer than a piece
            following = buffers[(turn + 1) % 2]
            following[:rest] = buffer[cut:end]
            ahead = reader.submit(fill, following, rest)
            if cut:
                yield pa.py_buffer(memoryview(buffer)[:cut])
        if rest:
            yield pa.py_buffer(memoryview(buffer)[:rest])


class _GrowingColumns:
    """Float64 columns filled a block of rows at a time, as one Fortran-ordered matrix.

    The number of rows is known only at the end: column ``k`` is kept at
    ``k * capacity`` of one buffer, made for an estimate (pages never
    written cost no memory), grown if the file has more rows, and the columns
    are moved together at the end.
    """

    def __init__(self, width: int, capacity: int) -> None:
        self.width, self.capacity, self.rows = width, capacity, 0
        self.buffer = np.empty(width * capacity)

    def append(self, columns: list[tuple[int, np.ndarray]], rows: int) -> None:
        if self.rows + rows > self.capacity:
            self._grow(max(2 * self.capacity, self.rows + rows))
        start, end = self.rows, self.rows + rows
        for k, values in columns:
            self.buffer[k * self.capacity + start : k * self.capacity + end] = values
        self.rows = end

    def result(self) -> np.ndarray:
        n, c = self.rows, self.capacity
        for k in range(1, self.width if n < c else 0):
            # Leftwards, in order: NumPy copies overlapping ranges correctly.
            self.buffer[k * n : (k + 1) * n] = self.buffer[k * c : k * c + n]
        return self.buffer[: n * self.width].reshape((n, self.width), order="F")

    def _grow(self, capacity: int) -> None:
        old, self.buffer = self.buffer, np.empty(self.width * capacity)
        for k in range(self.width):
            self.buffer[k * capacity : k * capacity + self.rows] = old[
                k * self.capacity : k * self.capacity + self.rows
            ]
        self.capacity = capacity


def _sample(path: str | os.PathLike[str]) -> tuple[int, int]:
    """From the file's size and its first MiB: a little more than its lines, and a block size.

    A block holds at least :data:`_ROWS_PER_BLOCK` of the longest lines: Arrow's
    work grows with blocks times columns, which matters in a wide file.
    """
    with open_binary(path) as raw:
        stream = gzip.GzipFile(fileobj=raw) if is_gzip(path) else raw
        try:
            head = stream.read(1 << 20)
        except (OSError, EOFError, zlib.error):
            return 1024, _BLOCK_SIZE  # Arrow will meet the bad data, and the error is named then
        block = max(_BLOCK_SIZE, _ROWS_PER_BLOCK * max(map(len, head.splitlines()), default=0))
        # Lines end in "\n", "\r\n" or "\r".
        lines = max(head.count(b"\n"), head.count(b"\r")) + 1
        if len(head) < 1 << 20:
            return lines, block
        # gzip's trailer holds the content's size (modulo 4 GiB: more rows grow the matrix).
        size = os.fstat(raw.fileno()).st_size
        if stream is not raw:
            raw.seek(-4, os.SEEK_END)
            size = int.from_bytes(raw.read(4), "little")
    return int(1.05 * size * lines / len(head)) + 1, block


def _unquote(values: Any) -> Any:
    """Text cells read with quoting off, with the quotes of quoted fields removed."""
    import pyarrow.compute as pc

    quoted = pc.starts_with(values, '"')
    if not pc.any(quoted).as_py():
        return values
    well_formed = pc.or_(pc.invert(quoted), pc.match_substring_regex(values, _QUOTED_FIELD))
    if not pc.all(well_formed).as_py():
        raise ArrowParseError("a quoted field is split or its quotes are not doubled")
    inner = pc.replace_substring(pc.utf8_slice_codeunits(values, 1, -1), '""', '"')
    return pc.if_else(quoted, inner, values)


def _float64_view(values: Any) -> np.ndarray:
    """An Arrow float64 array without nulls as a NumPy array, sharing its memory.

    ``Array.to_numpy`` would import pandas when it is installed.
    """
    return np.frombuffer(
        values.buffers()[1], dtype=np.float64, count=len(values), offset=values.offset * 8
    )
