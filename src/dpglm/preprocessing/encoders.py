"""A private one-hot encoder: the categories of string columns, selected inside a shared budget.

scikit-learn's ``OneHotEncoder`` reads every column's set of values off the
data, which releases them: a value that one record alone holds names that
record, and :func:`~dpglm.preprocessing.transformers.check_pipeline` flags it.
:class:`PrivateOneHotEncoder` selects them privately instead
(:mod:`dpglm.preprocessing.categories`: Gaussian noise on the count of every
observed value, kept above a threshold), charges the selection once per fit to
the shared :class:`~dpglm.privacy.budget.PrivacyBudget`, and encodes every
value it did not keep (and every value unseen at fit time) in one "other"
column per input column, so that it never fails on a value it has not
released. Columns whose categories are public (``categories``) are not read
for them and cost nothing.

Examples
--------
>>> import numpy as np
>>> from sklearn.pipeline import make_pipeline
>>> from dpglm.estimators import DPLogisticRegression
>>> from dpglm.privacy.budget import PrivacyBudget
>>> rng = np.random.default_rng(0)
>>> X = rng.choice(["north", "south", "east"], size=(20_000, 2)).astype(object)
>>> y = (X[:, 0] == "north") | (X[:, 1] == "east")
>>> budget = PrivacyBudget(2.0, 1e-6)
>>> model = make_pipeline(
...     PrivateOneHotEncoder(epsilon=0.5, budget=budget, random_state=0),
...     DPLogisticRegression(
...         budget=budget, feature_bounds=1.0, classes=[False, True], random_state=0
...     ),
... ).fit(X, y)
>>> len(budget.charges), model.score(X, y) > 0.95
(2, True)
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpglm.data.columns import object_array
from dpglm.data.frames import is_arrow_table, is_dataframe, is_series
from dpglm.exceptions import DataError, EmptyDataError, ShapeMismatchError
from dpglm.preprocessing.categories import (
    MISSING,
    CategoryPlan,
    count_levels,
    level_of,
    missing_markers,
)
from dpglm.preprocessing.transformers import check_budget, check_random_state, frame_feature_names
from dpglm.privacy.events import PrivacyPlan
from dpglm.privacy.report import PrivacyReport
from dpglm.privacy.spending import spend
from dpglm.privacy.targets import check_privacy_target, default_delta

__all__ = ["OTHER", "PrivateOneHotEncoder"]

#: the name of each column's level of the values not kept (and of those unseen at fit time)
OTHER = "<other>"

#: why a release needs delta > 0
_GAUSSIAN_REASON = "the categories are selected from Gaussian noisy counts"


# -- data --------------------------------------------------------------------------------------


def _read_columns(X, name):
    """``(columns, names)``: one 1-D object array per column of ``X``, and the string
    column names (None when ``X`` has none, or some are not strings)."""
    if X is None:
        raise ValueError(f"{name} needs X, a table of shape (n_samples, n_features)")
    if is_dataframe(X):
        names = frame_feature_names(X)
        # object, string and category columns alike: missing entries as None, NaN or NA
        columns = [X.iloc[:, j].to_numpy(dtype=object) for j in range(X.shape[1])]
    elif is_arrow_table(X):
        names = np.asarray([str(c) for c in X.column_names], dtype=object)
        # to_pylist, not to_numpy: it decodes dictionary columns with their nulls
        columns = [object_array(X.column(j).to_pylist()) for j in range(X.num_columns)]
    else:
        if sp.issparse(X) or is_series(X):
            raise ValueError(
                f"{name} takes a 2-D table of values (a DataFrame, a pyarrow Table or a 2-D "
                f"array), got {type(X).__name__}"
            )
        names = None
        array = np.asarray(X, dtype=object)
        if array.ndim != 2:
            raise ShapeMismatchError(
                f"Expected a 2-D array, got {array.ndim}-D input of shape {array.shape} "
                "instead. Reshape your data: X must have shape (n_samples, n_features), e.g. "
                "X.reshape(-1, 1) for a single feature"
            )
        columns = [array[:, j] for j in range(array.shape[1])]
    if not columns:
        raise EmptyDataError(f"Found a table with 0 feature(s) while {name} needs at least 1.")
    return columns, names


def _column_name(names, j) -> str:
    return f"column {names[j]!r}" if names is not None else f"column {j}"


# -- parameters --------------------------------------------------------------------------------


def _column_index(key, names, p) -> int:
    """The position of the column a ``categories`` key names: a position or a column name."""
    if isinstance(key, numbers.Integral) and not isinstance(key, bool):
        if 0 <= key < p:
            return int(key)
    elif names is not None and isinstance(key, str):
        found = np.flatnonzero(names == key)
        if found.size == 1:
            return int(found[0])
        if found.size > 1:
            raise ValueError(f"categories names column {key!r}, which X holds {found.size} times")
    columns = list(names) if names is not None else f"positions 0 to {p - 1}"
    raise ValueError(f"categories names column {key!r}, which is not a column of X ({columns})")


def _public_levels(values, where, markers) -> np.ndarray:
    """A column's public categories as levels, in the order given; refused if repeated. An
    empty list is a column whose every value goes to its other level (a constant column)."""
    if isinstance(values, str) or not hasattr(values, "__iter__"):
        raise ValueError(
            f"categories of {where}: give 'auto' or a list of its public values, got {values!r}"
        )
    try:
        levels = [level_of(v, markers) for v in values]
        seen = {}
        for level in levels:
            seen[level] = seen.get(level, 0) + 1
    except TypeError as err:
        raise ValueError(f"categories of {where}: every value must be hashable ({err})") from None
    repeated = [level for level, count in seen.items() if count > 1]
    if repeated:
        raise ValueError(
            f"categories of {where} holds {repeated[0]!r} more than once (missing markers all "
            f"count as {MISSING!r})"
        )
    return object_array(levels)


def _public_categories(categories, names, p, markers) -> list:
    """Per column: its public levels, or None when they are to be selected privately."""
    if categories is None or (isinstance(categories, str) and categories == "auto"):
        return [None] * p
    if not isinstance(categories, Mapping):
        raise ValueError(
            "categories must be None, 'auto' or a dict mapping a column (name or position) to "
            f"'auto' or a list of its public values, got {categories!r}"
        )
    public = [None] * p
    given = [False] * p
    for key, values in categories.items():
        j = _column_index(key, names, p)
        if given[j]:
            raise ValueError(f"categories gives {_column_name(names, j)} twice")
        given[j] = True
        if not (isinstance(values, str) and values == "auto"):
            public[j] = _public_levels(values, _column_name(names, j), markers)
    return public


# the checks of dpglm.preprocessing.transformers, with its words


def _check_sparse_output(sparse_output):
    if not isinstance(sparse_output, bool | np.bool_):
        raise ValueError(f"sparse_output must be a bool, got {sparse_output!r}")


def _counted(values, markers, where) -> dict:
    """:func:`~dpglm.preprocessing.categories.count_levels` of one column, named in errors."""
    try:
        return count_levels(values, markers)
    except TypeError as err:
        raise ValueError(f"{where}: every value must be hashable ({err})") from None


def _codes(values, levels, markers, where) -> np.ndarray:
    """The position of every record's level in ``levels``, ``len(levels)`` for the others.

    Only the distinct values are looked at in Python; the records are mapped
    through a dict in C (a NaN object is found by its identity).
    """
    index = {level: i for i, level in enumerate(levels)}
    other = len(levels)
    try:
        table = {v: index.get(level_of(v, markers), other) for v in dict.fromkeys(values)}
    except TypeError as err:
        raise ValueError(f"{where}: every value must be hashable ({err})") from None
    return np.fromiter(map(table.__getitem__, values), dtype=np.intp, count=len(values))


# -- the encoder -------------------------------------------------------------------------------


class PrivateOneHotEncoder(TransformerMixin, BaseEstimator):
    """One-hot encode categorical columns on categories selected privately (or given).

    ``fit`` selects the values of every column whose categories are not
    public as :func:`~dpglm.preprocessing.categories.select` does: the count of
    each observed value, plus Gaussian noise, kept when above a threshold; one
    plan of part ``"preprocessing"`` (a Gaussian release and the threshold's
    fixed delta), calibrated to ``(epsilon, delta)`` and charged once to
    ``budget``. ``transform`` gives one 0/1 column per kept value of each
    input column and one ``"<other>"`` column for the rest: a value not kept,
    or not seen at fit time, goes there without error.

    Every column of ``X`` is encoded (as by scikit-learn's ``OneHotEncoder``;
    a ``ColumnTransformer`` encodes a subset), its values used as given
    (numbers too) and named by their string form. ``None``, NaN, pandas'
    ``NA`` and the strings of ``missing_values`` are one level per column,
    ``"<missing>"`` (:data:`~dpglm.preprocessing.categories.MISSING`), kept
    or not like any other.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy of the selection (``inf``: every observed value kept, no
        noise, and the report says the fit is not private).
    delta : float or None, default=None
        ``None``: ``min(1 / n**2, 1e-5)`` for ``n`` records. Must be > 0 when something
        is selected; half pays for the threshold, half for the Gaussian noise.
    budget : PrivacyBudget, optional
        Shared budget charged once by every fit that selects something
        (shared, never copied: ``clone`` keeps the same object).
    categories : None, "auto" or dict, default=None
        A column (its name, or its position) -> ``"auto"`` or the list of its
        public values (missing markers among them stand for the missing
        level). Public columns are encoded on those values in the order
        given, are not read for them and cost nothing; the others are selected.
    missing_values : None, str or sequence of str, default=None
        Strings that mark a missing value (e.g. ``"?"``).
    sparse_output : bool, default=True
        A CSR matrix; False: a dense array.
    random_state : None, int, SeedSequence, Generator or NoiseSource, default=None
        The selection's noise (keyed to the budget charge, see
        :func:`~dpglm.privacy.spending.spend`).

    Attributes
    ----------
    categories_ : list of ndarray of object
        Per input column, the levels encoded in their own columns (the
        selected ones sorted by string form with ``"<missing>"`` last, or the
        public ones in their order).
    category_plan_ : CategoryPlan or None
        The selection's plan (its noise, threshold and events); None when
        every column is public.
    privacy_report_ : PrivacyReport
        The selection's report (its mechanisms of part ``"preprocessing"``);
        when every column is public, the report of an empty plan
        (``epsilon = 0``: nothing was read for the categories).
    delta_ : float or None
        The delta of the selection (None when nothing was selected).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` had string column names (a DataFrame, a pyarrow Table).

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.privacy.budget import PrivacyBudget
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack(
    ...     [rng.choice(["a", "b"], 5_000), rng.choice(["x", "y", "z"], 5_000)]
    ... ).astype(object)
    >>> X[0, 0], X[1, 1] = "rare", "?"
    >>> budget = PrivacyBudget(1.0, 1e-6)
    >>> encoder = PrivateOneHotEncoder(
    ...     epsilon=0.5, budget=budget, missing_values="?", random_state=0
    ... ).fit(X)
    >>> encoder.categories_
    [array(['a', 'b'], dtype=object), array(['x', 'y', 'z'], dtype=object)]
    >>> encoder.get_feature_names_out().tolist()
    ['x0_a', 'x0_b', 'x0_<other>', 'x1_x', 'x1_y', 'x1_z', 'x1_<other>']
    >>> encoder.transform([["rare", "y"], ["b", None]]).toarray()
    array([[0., 0., 1., 0., 1., 0., 0.],
           [0., 1., 0., 0., 0., 0., 1.]])
    >>> len(budget.charges), list(encoder.privacy_report_.parts)
    (1, ['preprocessing'])
    >>> public = PrivateOneHotEncoder(categories={0: ["a", "b"], 1: ["x", "y"]}).fit(X)
    >>> public.privacy_report_.epsilon, public.category_plan_ is None
    (0.0, True)
    """

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        budget=None,
        categories=None,
        missing_values=None,
        sparse_output=True,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.categories = categories
        self.missing_values = missing_values
        self.sparse_output = sparse_output
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = False
        return tags

    def fit(self, X, y=None):
        """Select (or take) every column's categories.

        Parameters
        ----------
        X : DataFrame, pyarrow Table or array-like of shape (n_samples, n_features)
            Hashable values: strings, numbers, missing markers. At least 2
            records when some column has no public categories; none are
            needed when every column has.
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A parameter out of range, a ``categories`` key that is not a
            column of ``X``, public categories that are empty or repeat a
            value, or unhashable values (the message names the column);
            nothing is charged.
        BudgetExceededError
            ``budget`` cannot afford the selection; nothing is charged or fitted.
        """
        name = type(self).__name__
        epsilon, delta = check_privacy_target(self.epsilon, self.delta, optional_delta=True)
        markers = missing_markers(self.missing_values)
        _check_sparse_output(self.sparse_output)
        check_budget(self.budget)
        check_random_state(self.random_state)
        columns, names = _read_columns(X, name)
        n, p = len(columns[0]), len(columns)
        kept = _public_categories(self.categories, names, p, markers)
        auto = [j for j in range(p) if kept[j] is None]
        public = [j for j in range(p) if kept[j] is not None]
        lines = []
        if public:
            lines.append(
                "categories given as public (not read from the data) for "
                + ", ".join(_column_name(names, j) for j in public)
            )
        plan = None
        if auto:
            if n < 2:
                # public categories read no record: only a selection needs them
                raise DataError(
                    f"n_samples={n}: {name} needs at least 2 samples to select the categories "
                    "of columns without public ones"
                )
            delta = default_delta(n) if delta is None else delta
            check_privacy_target(epsilon, delta, positive_delta=_GAUSSIAN_REASON)
            plan = CategoryPlan.create(n, len(auto), epsilon, delta)
            # counted before the charge, so that a column the selection cannot count is
            # refused with nothing charged; the counts are released only through the noise
            counts = [_counted(columns[j], markers, _column_name(names, j)) for j in auto]
            spent = spend(
                plan.plan,
                epsilon=epsilon,
                delta=delta,
                budget=self.budget,
                label=name,
                random_state=self.random_state,
            )
            selected = plan.keep(plan.noisy_counts(counts, spent.release(0)))
            for j, levels in zip(auto, selected, strict=True):
                kept[j] = levels
            lines.append(
                f"categories of {len(auto)} column(s) selected privately (Gaussian noise of "
                f"standard deviation {plan.noise_scale:.4g} on the count of "
                f"every observed value, kept above {plan.threshold:.4g}); values not kept, and "
                "values unseen at fit time, are encoded in their column's '<other>' level"
            )
            report = spent.report
        else:
            report = PrivacyReport.from_plan(PrivacyPlan(()), 0.0)
        if markers or auto:
            lines.append(
                "missing values (None, NaN, pandas NA"
                + "".join(f", {m!r}" for m in markers)
                + f") form one level per column, {MISSING!r}"
            )
        self.privacy_report_ = dataclasses.replace(
            report, assumptions=(*report.assumptions, *lines)
        )
        self.category_plan_ = plan
        self.delta_ = delta if auto else None
        self.categories_ = kept
        self.n_features_in_ = p
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    def transform(self, X):
        """One 0/1 column per kept value of each column, and one for the others.

        Parameters
        ----------
        X : DataFrame, pyarrow Table or array-like of shape (n_samples, n_features)

        Returns
        -------
        sparse matrix (CSR) or ndarray of shape (n_samples, n_output_features)
            float64; every row has exactly one 1 per input column.
        """
        check_is_fitted(self, "categories_")
        name = type(self).__name__
        columns, names = _read_columns(X, name)
        if len(columns) != self.n_features_in_:
            raise ValueError(
                f"X has {len(columns)} features, but {name} is expecting "
                f"{self.n_features_in_} features as input"
            )
        fitted = getattr(self, "feature_names_in_", None)
        if names is not None and fitted is not None and not np.array_equal(names, fitted):
            raise ValueError(
                "The feature names should match those that were passed during fit: "
                f"got {list(names)}, fitted on {list(fitted)}"
            )
        markers = missing_markers(self.missing_values)
        n, p = len(columns[0]), len(columns)
        widths = np.array([len(levels) + 1 for levels in self.categories_])
        offsets = np.concatenate([[0], np.cumsum(widths)[:-1]])
        codes = np.column_stack(
            [
                _codes(values, levels, markers, _column_name(self._names(), j))
                for j, (values, levels) in enumerate(zip(columns, self.categories_, strict=True))
            ]
        )
        # each row holds one 1 per input column, in increasing column order
        indices = (codes + offsets).ravel()
        indptr = np.arange(0, n * p + 1, p)
        encoded = sp.csr_matrix(
            (np.ones(n * p), indices, indptr), shape=(n, int(widths.sum())), dtype=np.float64
        )
        return encoded if self.sparse_output else encoded.toarray()

    def _names(self):
        return getattr(self, "feature_names_in_", None)

    def get_feature_names_out(self, input_features=None):
        """``"{column}_{value}"`` per kept value, and ``"{column}_<other>"``, per column.

        Parameters
        ----------
        input_features : array-like of str, optional
            The input columns' names; by default ``feature_names_in_``, or
            ``x0, x1, ...`` when ``X`` had none.

        Returns
        -------
        ndarray of str (object)
        """
        check_is_fitted(self, "categories_")
        fitted = self._names()
        if input_features is None:
            if fitted is not None:
                input_features = fitted
            else:
                input_features = [f"x{j}" for j in range(self.n_features_in_)]
        else:
            input_features = [str(c) for c in input_features]
            if len(input_features) != self.n_features_in_:
                raise ValueError(
                    f"input_features should have length equal to the number of features "
                    f"({self.n_features_in_}), got {len(input_features)}"
                )
            if fitted is not None and not np.array_equal(np.asarray(input_features), fitted):
                raise ValueError("input_features is not equal to feature_names_in_")
        out = []
        for column, levels in zip(input_features, self.categories_, strict=True):
            out += [f"{column}_{level}" for level in levels]
            out.append(f"{column}_{OTHER}")
        return np.asarray(out, dtype=object)
