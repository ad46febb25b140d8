"""Raw tables with string columns: one-hot encoded inside the estimator, category sets private.

A pandas DataFrame or a pyarrow Table whose columns mix numbers and strings
(object, string or ``category`` dtypes; Arrow strings and dictionaries) is
fitted as it is. Its string columns are one-hot encoded by a
:class:`~dpglm.preprocessing.encoders.PrivateOneHotEncoder`, whose category
sets are the user's (``categories=``: public, free) or selected privately
with a share of the fit's budget (:func:`category_share`); a value not
selected, or unseen at prediction time, goes to its column's "other" level.
The numeric columns take the estimator's private-by-default path, their
ranges released privately or given as ``feature_bounds`` (one per numeric
column), while the one-hot columns hold 0 or 1 by construction: their ranges
are public (:class:`~dpglm.preprocessing.bounds.PartialBounds`), taken as
``[-1, 1]`` so that a 0 stays 0.

The fit composes two releases: the category selection at
``(share epsilon, share delta)`` and the model at the rest, planned for the
rest before the categories are known (the number of one-hot columns depends
on them, and so may the model's plan). Basic composition of the two, which
holds whatever the second chooses from the first's output, gives the fit's
``(epsilon, delta)``; the report lists both parts, and a ``budget`` is
charged once for each. The category share is a tenth (:data:`CATEGORY_SHARE`,
measured on the raw census table in ``benchmarks/bench_categorical.py``), none
when every string column's categories are public.

Examples
--------
>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(0)
>>> frame = pd.DataFrame(
...     {"age": rng.uniform(20, 70, 4000), "job": rng.choice(["a", "b", "c"], 4000)}
... )
>>> categorical_columns(frame)
['job']
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from dpglm.data.columns import cell_kind, object_array, to_float_column
from dpglm.data.frames import is_arrow_table, is_dataframe, is_real_dtype, series_values
from dpglm.data.locations import feature_column, plain_row
from dpglm.estimators.validation import is_dask_frame
from dpglm.exceptions import DataError, NonNumericColumnError, ShapeMismatchError

__all__ = [
    "CATEGORY_PART",
    "CATEGORY_SHARE",
    "DENSE_LIMIT",
    "TableEncoding",
    "categorical_columns",
    "category_share",
    "check_categories",
    "child_random_state",
    "child_random_states",
    "composed_report",
    "fit_encoding",
    "is_table",
    "seed_sequence",
    "select_for",
]

#: the share of a fit's (epsilon, delta) that selects the category sets of its string
#: columns when some have no public categories (see category_share)
CATEGORY_SHARE = 0.1
#: an encoded table of at most this many columns is fitted as a dense matrix (its numeric
#: columns then centred); a wider one (string columns of many kept values) stays sparse
DENSE_LIMIT = 256
#: the report's name of the category selection's part
CATEGORY_PART = "category selection"
#: the suffix of the accountant of a report composed with a selection's
_BASIC = " (basic composition)"


def is_table(X) -> bool:
    """Whether ``X`` is a pandas DataFrame or a pyarrow Table.

    Examples
    --------
    >>> is_table(np.zeros((2, 2)))
    False
    """
    return is_dataframe(X) or is_arrow_table(X)


def check_unique_names(X) -> None:
    """Refuse a table two of whose columns share a name: each is read, and predicted on,
    by its name.

    Examples
    --------
    >>> import pandas as pd
    >>> check_unique_names(pd.DataFrame([[1, 2, 3]], columns=["a", "b", "a"]))
    Traceback (most recent call last):
    ...
    dpglm.exceptions.DataError: X has several columns named 'a' (at indices [0, 2]): give each column its own name
    """  # noqa: E501
    if is_arrow_table(X):
        names = [str(c) for c in X.column_names]
    elif is_dataframe(X) or is_dask_frame(X):
        names = [str(c) for c in X.columns]
    else:
        return
    seen: dict = {}
    for j, name in enumerate(names):
        seen.setdefault(name, []).append(j)
    for name, where in seen.items():
        if len(where) > 1:
            raise DataError(
                f"X has several columns named {name!r} (at indices {where}): give each "
                "column its own name"
            )


def _numeric_flags(X) -> list:
    """``(name, numeric)`` of every column of a DataFrame or Arrow table, from its type
    alone (real numbers and booleans are numeric; anything else is a string column)."""
    if is_dataframe(X):
        return [(str(name), is_real_dtype(dtype)) for name, dtype in X.dtypes.items()]
    import pyarrow as pa

    def numeric(kind):
        return pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)

    kinds = zip(X.column_names, X.schema.types, strict=True)
    return [(str(name), numeric(kind)) for name, kind in kinds]


def _columns(X) -> list:
    """``(name, values, missing, numeric)`` of every column of a DataFrame or Arrow table:
    numbers as float64 (missing cells NaN), anything else as an object array."""
    flags = _numeric_flags(X)
    out = []
    for j, (name, numeric) in enumerate(flags):
        if is_dataframe(X):
            values, missing = series_values(X.iloc[:, j])
            if not numeric:
                values = values.astype(object, copy=False)
        else:
            column = X.column(j)
            missing = np.asarray(column.is_null().to_numpy(zero_copy_only=False), dtype=bool)
            if numeric:
                values = column.to_numpy(zero_copy_only=False).astype(np.float64)
            else:
                values = object_array(column.to_pylist())
        out.append((name, values, missing, numeric))
    return out


def categorical_columns(X) -> list:
    """The names of the columns of a table that are not numbers (empty for anything else),
    read from the columns' types: no value is converted.

    Examples
    --------
    >>> import pandas as pd
    >>> categorical_columns(pd.DataFrame({"a": [1.0], "b": ["x"], "c": [True]}))
    ['b']
    """
    if not is_table(X):
        return []
    return [name for name, numeric in _numeric_flags(X) if not numeric]


def category_share(n_public: int, n_columns: int) -> float:
    """The share of a fit's ``(epsilon, delta)`` that selects the category sets: none when
    every string column has public categories, else :data:`CATEGORY_SHARE`.

    The selection's noise adds to every count once, whatever the number of
    records, so the share that keeps the frequent values (those held by a
    few percent of the records) is small for any table worth fitting; the
    model gets the rest. Measured on the raw census table (``benchmarks/
    bench_categorical.py``).

    Examples
    --------
    >>> category_share(0, 8), category_share(8, 8)
    (0.1, 0.0)
    """
    return 0.0 if n_public >= n_columns else CATEGORY_SHARE


@dataclass
class TableEncoding:
    """How a raw table becomes the matrix a model is fitted on: its numeric columns as
    numbers, its string columns one-hot encoded.

    Attributes
    ----------
    columns : tuple of str
        Every column of the table, in order.
    numeric : tuple of str
        The numeric ones (first in the matrix, in this order).
    categorical : tuple of str
        The string ones (their one-hot blocks follow, in this order).
    encoder : PrivateOneHotEncoder
        Fitted on the string columns.
    dense : bool
        Whether the matrix is dense (decided at fit time from its width, see
        :data:`DENSE_LIMIT`, and kept: the model's scaling depends on it).
    """

    columns: tuple
    numeric: tuple
    categorical: tuple
    encoder: object
    dense: bool = True

    @property
    def feature_names_out(self) -> np.ndarray:
        """The name of every column of the matrix: numeric names, then ``column_value``."""
        encoded = self.encoder.get_feature_names_out(list(self.categorical))
        names = list(self.numeric) + [str(v) for v in encoded]
        return np.asarray(names, dtype=object)

    @property
    def n_numeric(self) -> int:
        return len(self.numeric)

    @property
    def n_encoded(self) -> int:
        """The number of columns of the matrix."""
        return len(self.feature_names_out)

    def matrix(self, X):
        """The matrix of table ``X``: dense float64 (sparse CSR when not :attr:`dense`), its
        numeric columns checked finite (the error names the column and row)."""
        columns = {name: (values, missing) for name, values, missing, _ in _columns(X)}
        absent = [name for name in self.columns if name not in columns]
        if absent:
            raise ShapeMismatchError(
                f"X lacks the column(s) {absent} the model was fitted with; it needs "
                f"{list(self.columns)}"
            )
        names = list(self.columns)
        numbers = np.empty((_rows(X), self.n_numeric), dtype=np.float64, order="F")
        for j, name in enumerate(self.numeric):
            values, missing = columns[name]
            numbers[:, j] = to_float_column(
                values,
                column=feature_column(names, names.index(name)),
                describe_row=plain_row,
                missing=missing,
            )
        cells = _object_table([columns[name][0] for name in self.categorical])
        encoded = self.encoder.transform(cells)
        if self.dense:
            dense = encoded.toarray() if sp.issparse(encoded) else np.asarray(encoded)
            return np.asfortranarray(np.hstack([numbers, dense]))
        return sp.hstack([sp.csr_matrix(numbers), sp.csr_matrix(encoded)], format="csr")

    def public_bounds(self, numeric_bounds):
        """:class:`~dpglm.preprocessing.bounds.PartialBounds` of the matrix: the numeric
        columns' ``numeric_bounds`` (``(low, high)`` arrays, or None: unknown) and
        ``[-1, 1]`` for every one-hot column (its entries, 0 or 1, lie there)."""
        from dpglm.preprocessing.bounds import PartialBounds

        k = self.n_encoded - self.n_numeric
        if numeric_bounds is None:
            low = np.full(self.n_numeric, np.nan)
            high = np.full(self.n_numeric, np.nan)
        elif isinstance(numeric_bounds, PartialBounds):
            low, high = numeric_bounds.low, numeric_bounds.high
        else:
            low, high = numeric_bounds
        # a one-hot entry is 0 or 1: taken on [-1, 1], it keeps its 0 (a record's one-hot
        # part has L2 norm sqrt(c), c string columns), where [0, 1] would centre every
        # entry to -1 or +1 (norm sqrt(k), k one-hot columns) and its clipping would drown it
        return PartialBounds.of(
            np.concatenate([low, -np.ones(k)]),
            np.concatenate([high, np.ones(k)]),
            f"{k} one-hot columns of {len(self.categorical)} string columns (0 or 1) taken "
            "on [-1, 1], so that 0 stays 0",
        )

    def to_dict(self) -> dict:
        """JSON-ready description (the category sets are public once released)."""
        return {
            "columns": list(self.columns),
            "numeric": list(self.numeric),
            "categorical": list(self.categorical),
            "categories": [[_jsonable(v) for v in c] for c in self.encoder.categories_],
            "missing_values": self.encoder.missing_values,
            "dense": self.dense,
        }

    @classmethod
    def from_dict(cls, data: dict) -> TableEncoding:
        """Rebuild an encoding from :meth:`to_dict` (its encoder fitted on public categories,
        which reads no record)."""
        categorical = tuple(data["categorical"])
        categories = dict(zip(categorical, data["categories"], strict=True))
        encoder = _public_encoder(list(categorical), categories, data.get("missing_values"))
        columns, numeric = tuple(data["columns"]), tuple(data["numeric"])
        return cls(columns, numeric, categorical, encoder, bool(data.get("dense", True)))


def _rows(X) -> int:
    return int(X.shape[0]) if is_dataframe(X) else int(X.num_rows)


def _object_table(columns) -> np.ndarray:
    """The string columns as one 2-D object array, column by column."""
    table = np.empty((len(columns[0]) if columns else 0, len(columns)), dtype=object)
    for j, values in enumerate(columns):
        table[:, j] = values
    return table


def _jsonable(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _public_encoder(names, categories, missing_values):
    """A one-hot encoder of the string columns ``names`` on public ``categories`` (fitted on
    no record: it reads nothing)."""
    from dpglm.preprocessing.encoders import PrivateOneHotEncoder

    encoder = PrivateOneHotEncoder(
        categories={names.index(name): values for name, values in categories.items()},
        missing_values=missing_values,
        sparse_output=True,
    )
    return encoder.fit(np.empty((0, len(names)), dtype=object))


def fit_encoding(X, *, categories, missing_values, epsilon, delta, budget, random_state):
    """Select the category sets of the string columns of table ``X`` and build its encoding.

    Parameters
    ----------
    X : pandas.DataFrame or pyarrow.Table
    categories : dict or None
        Public category sets of some string columns (free).
    missing_values : str, list of str or None
        Strings that mark a missing value (their own level).
    epsilon, delta : float
        The selection's share of the fit's target (0 when every string column
        has public categories: nothing is released).
    budget : PrivacyBudget or None
        Charged for the selection.
    random_state : None, int or Generator
        The selection's noise (a stream apart from the model's).

    Returns
    -------
    TableEncoding
    """
    from dpglm.preprocessing.encoders import PrivateOneHotEncoder

    found = _columns(X)
    names = tuple(name for name, _, _, _ in found)
    numeric = tuple(name for name, _, _, kind in found if kind)
    categorical = tuple(name for name, _, _, kind in found if not kind)
    unknown = sorted(set(categories or {}) - set(categorical))
    if unknown:
        raise DataError(
            f"categories names column(s) {unknown} that are not string columns of X; its "
            f"string columns are {list(categorical)}"
        )
    public = set(categories or {})
    for j, (name, values, missing, kind) in enumerate(found):
        if not kind and name not in public and not _declared_categorical(X, j):
            check_not_mixed(values, missing, missing_values, feature_column(names, j))
    cells = _object_table([values for name, values, _, kind in found if not kind])
    encoder = PrivateOneHotEncoder(
        epsilon=epsilon if epsilon > 0 else 1.0,
        delta=delta,
        budget=budget,
        categories={categorical.index(k): v for k, v in (categories or {}).items()},
        missing_values=missing_values,
        sparse_output=True,
        random_state=random_state,
    )
    encoder.fit(cells)
    encoding = TableEncoding(names, numeric, categorical, encoder)
    encoding.dense = encoding.n_encoded <= DENSE_LIMIT
    return encoding


def _declared_categorical(X, j) -> bool:
    """Whether column ``j`` of the table has a categorical type (pandas ``category``, an
    Arrow dictionary): its values are categories whatever they look like."""
    if is_dataframe(X):
        return str(X.dtypes.iloc[j]) == "category"
    import pyarrow as pa

    return pa.types.is_dictionary(X.schema.types[j])


def check_not_mixed(values, missing, missing_values, label) -> None:
    """Refuse a string column most of whose cells are numbers: a column of numbers with a
    bad cell (``'abc'`` in a column read as text because of it), which one-hot encoding
    would silently turn into one column per number.

    A cell is missing when ``missing`` says so or it is one of ``missing_values`` or the
    usual markers (``""``, ``"NA"``, ``"?"``, ...), a number when it is one or its text
    parses as one, a word otherwise. Number-like text alone (zip codes) stays categories.

    Examples
    --------
    >>> cells = np.array(["1.5", "2", "abc", "3"], dtype=object)
    >>> check_not_mixed(cells, np.zeros(4, dtype=bool), None, "feature column 'x'")
    Traceback (most recent call last):
    ...
    dpglm.exceptions.NonNumericColumnError: feature column 'x' holds numbers (3 of its cells) and words, e.g. 'abc' at row 2; a column of numbers must hold numbers only (fix that cell), and a column of categories is one-hot encoded when its values are words (or of a category type)
    """  # noqa: E501
    markers = {missing_values} if isinstance(missing_values, str) else set(missing_values or ())
    present = ~np.asarray(missing, dtype=bool)
    if not present.any():
        return
    # a kind per distinct cell (counted in C): a column of categories holds few
    counts = Counter(values[present].tolist())
    kinds = {cell: cell_kind(str(cell), markers) for cell in counts}
    numbers = sum(n for cell, n in counts.items() if kinds[cell] == "number")
    words = sum(n for cell, n in counts.items() if kinds[cell] == "word")
    if words and numbers > words:
        first = next(i for i in np.flatnonzero(present) if kinds[values[i]] == "word")
        raise NonNumericColumnError(
            f"{label} holds numbers ({numbers} of its cells) and words, e.g. "
            f"{values[first]!r} at {plain_row(first)}; a column of numbers must "
            "hold numbers only (fix that cell), and a column of categories is one-hot "
            "encoded when its values are words (or of a category type)"
        )


def check_categories(categories) -> dict:
    """The validated ``categories`` parameter: column name -> tuple of public values.

    Examples
    --------
    >>> check_categories({"sex": ["Female", "Male"]})
    {'sex': ('Female', 'Male')}
    >>> check_categories({"sex": []})
    Traceback (most recent call last):
    ...
    ValueError: categories['sex'] is empty; give the column's public values (or leave it out to select them privately)
    """  # noqa: E501
    if categories is None:
        return {}
    if not isinstance(categories, dict):
        raise TypeError(
            "categories must be a dict of column name -> list of public values, got "
            f"{type(categories).__name__}"
        )
    checked = {}
    for name, values in categories.items():
        if isinstance(values, str) or not hasattr(values, "__iter__"):
            raise TypeError(f"categories[{name!r}] must be a list of values, got {values!r}")
        values = tuple(values)
        if not values:
            raise ValueError(
                f"categories[{name!r}] is empty; give the column's public values (or leave it "
                "out to select them privately)"
            )
        seen = set()
        for value in values:
            if value in seen:
                raise ValueError(f"categories[{name!r}] lists {value!r} twice")
            seen.add(value)
        checked[str(name)] = values
    return checked


def child_random_states(random_state, count: int, skip: int = 0) -> list:
    """``count`` seeds apart from ``random_state``'s own stream, after ``skip`` others.

    An int or a SeedSequence spawns child sequences (the same seed gives the
    same children, and never the parent's draws); the children ``skip`` to
    ``skip + count - 1`` are returned, so that two callers of one seed can
    take different ones. A Generator is shared (its state advances); None
    stays None (fresh entropy).

    Examples
    --------
    >>> child_random_states(None, 2)
    [None, None]
    >>> [c.spawn_key for c in child_random_states(3, 2, skip=1)]
    [(1,), (2,)]
    """
    random_state = seed_sequence(random_state)
    if isinstance(random_state, np.random.SeedSequence):
        return random_state.spawn(skip + count)[skip:]
    return [random_state] * count


def seed_sequence(random_state):
    """An int seed as the SeedSequence of its entropy; anything else as it is.

    Examples
    --------
    >>> seed_sequence(3).entropy, seed_sequence(None)
    (3, None)
    """
    if isinstance(random_state, int | np.integer) and not isinstance(random_state, bool):
        return np.random.SeedSequence(int(random_state))
    return random_state


def child_random_state(random_state):
    """A seed for the category selection apart from the model's own stream: the first
    of :func:`child_random_states`.

    Examples
    --------
    >>> child_random_state(None) is None
    True
    >>> type(child_random_state(3)).__name__
    'SeedSequence'
    """
    return child_random_states(random_state, 1)[0]


def composed_report(selection, model, part=CATEGORY_PART):
    """One report of the category selection (or any release) and the model fitted after it.

    Basic composition: epsilons and deltas add, whatever the model's plan
    chose from the selection's output. The selection's mechanisms are listed
    as ``part`` (:data:`CATEGORY_PART` by default), beside the model's own;
    a part both hold adds up.

    Parameters
    ----------
    selection, model : PrivacyReport
    part : str, default=CATEGORY_PART

    Returns
    -------
    PrivacyReport
    """
    from dpglm.privacy.report import PrivacyReport

    parts = {}
    if selection.mechanisms:
        parts[part] = selection.epsilon
    for name, epsilon in model.parts.items():
        parts[name] = parts.get(name, 0.0) + epsilon
    mechanisms = tuple(replace(m, part=part) for m in selection.mechanisms)
    accountant = model.accountant
    if selection.mechanisms:
        # one suffix for a chain of such compositions
        inner = model.accountant.removesuffix(_BASIC)
        accountant = f"{selection.accountant} + {inner}{_BASIC}"
    return PrivacyReport(
        epsilon=selection.epsilon + model.epsilon,
        delta=selection.delta + model.delta if selection.mechanisms else model.delta,
        neighbouring=model.neighbouring,
        accountant=accountant,
        mechanisms=(*mechanisms, *model.mechanisms),
        parts=parts,
        epsilon_by_accountant={},
        assumptions=tuple(dict.fromkeys((*selection.assumptions, *model.assumptions))),
        warnings=tuple(dict.fromkeys((*selection.warnings, *model.warnings))),
        execution=model.execution,
        secure=selection.secure and model.secure,
    )


def select_for(estimator, X, epsilon: float, delta: float, random_state):
    """The category selection of ``estimator`` (its ``categories``, ``missing_values``,
    ``feature_bounds`` and ``budget``) on table ``X``, at its share of ``(epsilon, delta)``.

    Everything is checked before the selection is charged (a refusal costs
    nothing). A non-private target (``epsilon = inf``) reads the categories as
    it reads the ranges.

    Returns
    -------
    encoding : TableEncoding
    bounds : PartialBounds
        The public ranges of the one-hot columns beside the numeric columns'
        (the user's, or unknown).
    rest : tuple of float
        ``(epsilon, delta)`` left for what follows the selection.
    """
    name = type(estimator).__name__
    bounds = estimator.feature_bounds
    if isinstance(bounds, str) and bounds == "data":
        raise ValueError(
            f"{name}(feature_bounds='data') is not taken with string columns in X: leave "
            "feature_bounds unset for private ranges, or give public ones per numeric column"
        )
    from dpglm.preprocessing.bounds import check_feature_bounds

    categories = check_categories(estimator.categories)
    strings = categorical_columns(X)
    numeric_bounds = check_feature_bounds(bounds, len(X.columns) - len(strings), partial=True)
    share = category_share(len(set(categories) & set(strings)), len(strings))
    private = not math.isinf(epsilon)
    selection = (share * epsilon if private else math.inf, share * delta if private else 0.0)
    encoding = fit_encoding(
        X,
        categories=categories,
        missing_values=estimator.missing_values,
        epsilon=selection[0],
        delta=selection[1],
        budget=estimator.budget,
        random_state=child_random_state(random_state),
    )
    rest = (epsilon - selection[0] if private else epsilon, delta - selection[1])
    return encoding, encoding.public_bounds(numeric_bounds), rest
