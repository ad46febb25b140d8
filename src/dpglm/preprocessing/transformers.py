"""Private scikit-learn transformers: clip, min-max and standard scaling inside a shared budget.

Each transformer learns what it needs from the data through Gaussian
releases of part ``"preprocessing"``, planned before the data is read,
charged once per fit to the shared
:class:`~dpglm.privacy.budget.PrivacyBudget` (``budget``), and described in
``privacy_report_``:

- :class:`PrivateClipper` releases every column's range
  (:class:`~dpglm.preprocessing.ranges.RangePlan`: noisy log-scale
  histograms) and clips each record to it;
- :class:`PrivateMinMaxScaler` releases the same ranges and maps each
  clipped column onto ``[0, 1]``;
- :class:`PrivateStandardScaler` releases the ranges with a share of the
  budget (:data:`RANGE_SHARE`), then the column sums and sums of squares of
  the clipped records, and standardises with the noisy mean and variance.

Public ``bounds`` (a number ``B`` for ``[-B, B]``, one per column, or
``(low, high)`` rows) replace the range release and its cost: the clipper and
the min-max scaler then charge nothing. Sensitivities come from the clipping
ranges, never from the data; neighbouring datasets differ in one record's
values (replace-one: the number of records ``n`` is public, and ``delta``
defaults to ``min(1 / n**2, 1e-5)``). The loader refuses NaN and infinite entries, so
that every entry a transformer reads lies in its range once clipped. Sparse
input keeps its zeros: the ranges are widened to contain 0 (as dpglm's
estimators do), and only the transformations that map 0 to 0 accept it.

:func:`check_pipeline` finds the steps of a fitted pipeline that learned from
the data without privacy (a scikit-learn ``StandardScaler`` before a private
estimator, say), whose output the final step's guarantee does not cover.

Examples
--------
>>> import numpy as np
>>> from sklearn.pipeline import make_pipeline
>>> from dpglm.estimators import DPLogisticRegression
>>> from dpglm.privacy.budget import PrivacyBudget
>>> rng = np.random.default_rng(0)
>>> X = rng.normal([50.0, -3.0], [20.0, 0.5], size=(20_000, 2))
>>> y = (X[:, 0] - 50.0) / 20.0 + (X[:, 1] + 3.0) / 0.5 > 0
>>> budget = PrivacyBudget(4.0, 1e-6)
>>> model = make_pipeline(
...     PrivateStandardScaler(budget=budget, random_state=0),
...     DPLogisticRegression(
...         budget=budget, feature_bounds=4.0, classes=[False, True], random_state=0
...     ),
... ).fit(X, y)
>>> len(budget.charges), model.score(X, y) > 0.9
(2, True)
>>> check_pipeline(model)
[]
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, OneToOneFeatureMixin, TransformerMixin
from sklearn.compose import ColumnTransformer
from sklearn.pipeline import FeatureUnion, Pipeline
from sklearn.utils.validation import check_is_fitted

from dpglm.data import load
from dpglm.data.frames import is_dataframe, is_series
from dpglm.exceptions import (
    DataError,
    EmptyDataError,
    NonFiniteValueError,
    NonNumericColumnError,
    ShapeMismatchError,
)
from dpglm.preprocessing.bounds import check_feature_bounds
from dpglm.preprocessing.ranges import PART, RangePlan
from dpglm.preprocessing.scaling import Scaling
from dpglm.privacy.events import GaussianEvent, PrivacyPlan
from dpglm.privacy.leaks import warn_privacy_leak
from dpglm.privacy.mechanisms import make_noise_source
from dpglm.privacy.report import PrivacyReport
from dpglm.privacy.spending import spend
from dpglm.privacy.targets import Share, check_privacy_target, default_delta

__all__ = [
    "RANGE_SHARE",
    "SHAPE_ATTRIBUTES",
    "SQUARES_LABEL",
    "SUMS_LABEL",
    "PrivateClipper",
    "PrivateMinMaxScaler",
    "PrivateStandardScaler",
    "check_budget",
    "check_pipeline",
    "check_random_state",
    "frame_feature_names",
    "leaf_steps",
    "leak_messages",
    "leaking_steps",
]

#: the share of a standard scaler's (epsilon, delta) that releases the ranges when no
#: public bounds are given; the moments get the rest (the whole plan is calibrated to the
#: target, so they get what the composition leaves, not a fixed 70 %)
RANGE_SHARE = Share(0.3, "range share")
#: the label of the standard scaler's first moment release
SUMS_LABEL = (
    "column sums of the records clipped to their ranges and mapped into [-1, 1] "
    "(Gaussian; L2 sensitivity 2 sqrt(p), p features)"
)
#: the label of its second moment release
SQUARES_LABEL = "column sums of the squares of the same values (Gaussian; L2 sensitivity sqrt(p))"
#: fitted attributes that are functions of the data's public shape (and of the
#: hyperparameters) only: a transformer that learns nothing else learns nothing private
SHAPE_ATTRIBUTES = frozenset({"n_features_in_", "feature_names_in_", "n_output_features_"})

#: why a release needs delta > 0
_GAUSSIAN_REASON = "the ranges and the moments are released with Gaussian noise"
#: what ``bounds`` takes
_BOUNDS_TAKES = (
    "bounds must be None, a number B > 0 (the range [-B, B] for every column), a 1-D "
    "array-like of them (one per column) or an (n_features, 2) array-like of (low, high) rows"
)


# -- parameters --------------------------------------------------------------------------------
#
# dpglm.estimators.validation holds the estimators' checks, but this layer lies below the
# estimators and may not import them: the bounds are checked by the check both share
# (dpglm.preprocessing.bounds); the few checks below keep the estimators' wording.


def _check_bounds(bounds, n_features=None):
    """``bounds`` as ``(low, high)`` arrays or None (the estimators' check, under this name).

    ``"data"``, which the estimators take as a leak they report, is refused:
    a transformer's ranges are public or released, never read for free.
    """
    if isinstance(bounds, str) and bounds == "data":
        raise ValueError(f"{_BOUNDS_TAKES}, got 'data' (leave bounds=None for private ranges)")
    return check_feature_bounds(bounds, n_features, name="bounds")


def check_budget(budget):
    """Refuse a ``budget`` that is neither None nor a budget (something with ``charge``).

    Examples
    --------
    >>> check_budget(None)
    >>> check_budget(1.0)
    Traceback (most recent call last):
    ...
    ValueError: budget must be None or a PrivacyBudget, got 1.0
    """
    if budget is not None and not callable(getattr(budget, "charge", None)):
        raise ValueError(f"budget must be None or a PrivacyBudget, got {budget!r}")


def check_random_state(random_state):
    """Refuse a ``random_state`` the noise source would refuse, before the data is read.

    Examples
    --------
    >>> check_random_state(0)
    >>> check_random_state("seed")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: random_state: ...
    """
    try:
        make_noise_source(random_state)
    except (TypeError, ValueError) as err:
        raise ValueError(f"random_state: {err}") from None


def _check_with_mean(with_mean):
    if not isinstance(with_mean, bool | np.bool_):
        raise ValueError(f"with_mean must be a bool, got {with_mean!r}")
    return bool(with_mean)


# -- data --------------------------------------------------------------------------------------


def frame_feature_names(X):
    """The column names of a DataFrame when all are strings (scikit-learn's rule); None for
    anything else.

    Examples
    --------
    >>> frame_feature_names(np.zeros((2, 2))) is None
    True
    """
    if not is_dataframe(X):
        return None
    kinds = {isinstance(c, str) for c in X.columns}
    if kinds == {True}:
        return np.asarray([str(c) for c in X.columns], dtype=object)
    if kinds == {True, False}:
        raise TypeError(
            "Feature names are only supported if all input features have string names; "
            "convert them all to strings, e.g. X.columns = X.columns.astype(str)"
        )
    return None


def _read(X, name):
    """``X`` validated by :func:`dpglm.data.load`: float64, finite, 2-D (sparse stays sparse)."""
    if X is None:
        raise ValueError(f"{name} needs X, an array-like of shape (n_samples, n_features)")
    # scikit-learn's words for the shapes and types its estimator checks try
    if not (sp.issparse(X) or is_dataframe(X) or is_series(X)):
        try:
            X = np.asarray(X)
        except (TypeError, ValueError):
            pass  # ragged and the like: the loader says what is wrong
        else:
            if X.dtype.kind == "c":
                raise NonNumericColumnError(
                    f"Complex data not supported: X has dtype {X.dtype}; {name} takes real "
                    "features"
                )
            if X.ndim != 2:
                raise ShapeMismatchError(
                    f"Expected a 2-D array, got {X.ndim}-D input of shape {X.shape} instead. "
                    "Reshape your data: X must have shape (n_samples, n_features), e.g. "
                    "X.reshape(-1, 1) for a single feature"
                )
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) == 2 and shape[0] > 0 and shape[1] == 0:
        raise EmptyDataError(
            f"Found array with 0 feature(s) (shape={tuple(shape)}) while a minimum of 1 is "
            "required."
        )
    rows = len(X) if shape is None or is_series(X) else shape[0]
    try:
        return load(X, np.zeros(rows)).X
    except NonFiniteValueError as err:
        # scikit-learn's words, which its estimator checks look for
        raise NonFiniteValueError(f"Input contains NaN or infinity: {err}") from err


def _like(result, original):
    """A sparse ``result`` in the family of ``original`` (matrix or array), CSR."""
    if isinstance(original, sp.spmatrix):
        return sp.csr_matrix(result)
    return sp.csr_array(result)


# -- the transformers --------------------------------------------------------------------------


class _RangeTransformer(OneToOneFeatureMixin, TransformerMixin, BaseEstimator):
    """What the private transformers share: checks, the range release, clipping."""

    #: whether the fit releases the moments too (the standard scaler)
    _moments = False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._accepts_sparse()
        return tags

    def _accepts_sparse(self) -> bool:
        return True

    def _releases(self) -> bool:
        """Whether a fit releases anything (and is charged): known before the data is read."""
        return self.bounds is None or self._moments

    def _check_params(self):
        """Every parameter, before the data is read; returns ``(epsilon, delta)``."""
        epsilon, delta = check_privacy_target(
            self.epsilon,
            self.delta,
            optional_delta=True,
            positive_delta=_GAUSSIAN_REASON if self._releases() else None,
        )
        _check_bounds(self.bounds)
        check_budget(self.budget)
        check_random_state(self.random_state)
        return epsilon, delta

    def _check_sparse(self, sparse, public):
        """Refuse, before anything is charged, sparse input the transformation cannot take."""

    def _moment_events(self, n_features) -> tuple:
        return ()

    def _learn(self, X, scaling, releases, n) -> dict:
        """Further attributes, from the records and the releases after the ranges'."""
        return {}

    def fit(self, X, y=None):
        """Release (or take) the ranges, and whatever else the transformation needs.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Finite values (NaN and infinity are refused).
        y : None
            Ignored.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            A parameter out of range (the message names it), ``bounds`` of the
            wrong length, sparse input the transformation cannot take, or data
            :func:`dpglm.data.load` refuses; nothing is charged.
        BudgetExceededError
            ``budget`` cannot afford the fit; nothing is charged or fitted.
        """
        name = type(self).__name__
        epsilon, delta = self._check_params()
        names = frame_feature_names(X)
        X = _read(X, name)
        n, p = X.shape
        sparse = sp.issparse(X)
        public = _check_bounds(self.bounds, p)
        self._check_sparse(sparse, public)
        range_plan, events, releases, report = None, (), [], None
        if self._releases():
            if n < 2:
                raise DataError(f"n_samples={n}: {name} needs at least 2 samples to fit")
            delta = default_delta(n) if delta is None else delta
            if public is None:
                range_share = RANGE_SHARE if self._moments else None
                range_plan = _range_plan(p, epsilon, delta, range_share)
                events = range_plan.plan.events
            events = (*events, *self._moment_events(p))
            spent = spend(
                PrivacyPlan(events),
                epsilon=epsilon,
                delta=delta,
                budget=self.budget,
                label=name,
                random_state=self.random_state,
            )
            releases = [spent.release(i) for i in range(len(events))]
            report = spent.report
        k = 0 if range_plan is None else len(range_plan.plan.events)
        if range_plan is not None:
            ranges, _ = range_plan.release(X, None, releases[:k])
            low, high = ranges.low, ranges.high
            counts = {s: ranges.sources.count(s) for s in ("column", "rows", "unit")}
            lines = (
                "feature ranges released privately (part 'preprocessing': Gaussian noise on "
                f"log-scale histograms): {counts['column']} from their own histogram, "
                f"{counts['rows']} from the records' extremes, {counts['unit']} taken as "
                "[-1, 1]; every entry clipped to its range per record",
            )
        else:
            low, high = public
            lines = (
                "feature ranges (low, high) given as bounds (public): every entry clipped to "
                "its range per record",
            )
        # sparse input keeps its zeros: its ranges contain 0, so an implicit zero is clipped
        # to itself
        scaling = Scaling.from_ranges(low, high, centred=not sparse)
        learned = self._learn(X, scaling, releases[k:], n)
        if report is not None:
            report = dataclasses.replace(report, assumptions=(*report.assumptions, *lines))
        # every fitted attribute is set at once, after a fit that succeeded
        self.n_features_in_ = p
        if names is not None:
            self.feature_names_in_ = names
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.low_, self.high_ = scaling.low.copy(), scaling.high.copy()
        for attribute, value in learned.items():
            setattr(self, attribute, value)
        self.delta_ = delta if report is not None else None
        self.privacy_report_ = report
        return self

    def _checked(self, X):
        """``X`` read for ``transform``: fitted, the same columns, finite."""
        check_is_fitted(self, "low_")
        name = type(self).__name__
        names = frame_feature_names(X)
        fitted = getattr(self, "feature_names_in_", None)
        if fitted is not None and names is not None:
            if len(fitted) != len(names) or not np.all(fitted == names):
                raise ValueError(
                    "The feature names should match those that were passed during fit: "
                    f"{name} was fitted with {list(fitted)}, X has {list(names)}"
                )
        elif names is not None:
            warnings.warn(
                f"X has feature names, but {name} was fitted without feature names",
                UserWarning,
                stacklevel=3,
            )
        elif fitted is not None:
            warnings.warn(
                f"X does not have valid feature names, but {name} was fitted with feature names",
                UserWarning,
                stacklevel=3,
            )
        original = X
        X = _read(X, name)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {name} is expecting {self.n_features_in_} "
                "features as input"
            )
        if sp.issparse(X):
            outside = np.flatnonzero((self.low_ > 0) | (self.high_ < 0))
            if outside.size:
                j = int(outside[0])
                raise ValueError(
                    f"{name} was fitted on dense data: the range of column {j}, "
                    f"[{self.low_[j]:g}, {self.high_[j]:g}], excludes 0, so a sparse "
                    "matrix's zeros would not stay zeros; transform X.toarray(), or fit on "
                    "sparse data"
                )
        return X, original

    def _clip(self, X):
        return Scaling(self.low_, self.high_, centred=not sp.issparse(X)).clip(X)


def _range_plan(n_features, epsilon, delta, share):
    """The range release: all of ``(epsilon, delta)``, or ``share`` of them."""
    if share is None:
        return RangePlan.create(n_features, epsilon=epsilon, delta=delta)
    return RangePlan.share_of(n_features, epsilon=epsilon, delta=delta, share=share)


#: the parameters and attributes of the clipper and the min-max scaler, for their docstrings
_RANGE_PARAMETERS_DOC = """
    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy of the fit's release (``inf``: released without noise, and
        the report says the fit is not private).
    delta : float or None, default=None
        ``None``: ``min(1 / n**2, 1e-5)`` for ``n`` records. Must be > 0 when something
        is released (the noise is Gaussian).
    budget : PrivacyBudget, optional
        Shared budget charged once by every fit that releases something
        (shared, never copied: ``clone`` keeps the same object).
    bounds : None, float, array-like of shape (n_features,) or (n_features, 2), default=None
        Public ranges: ``B`` (or one ``B_j`` per column) for ``[-B_j, B_j]``,
        or ``(low_j, high_j)`` rows. None: the ranges are released privately
        (:class:`~dpglm.preprocessing.ranges.RangePlan`).
    random_state : None, int, SeedSequence, Generator or NoiseSource, default=None
        The release's noise (keyed to the budget charge, see
        :func:`~dpglm.privacy.spending.spend`).

    Attributes
    ----------
    low_, high_ : ndarray of shape (n_features,)
        The ranges every entry is clipped to (sparse input: widened to
        contain 0, so that zeros stay zeros).
    privacy_report_ : PrivacyReport or None
        The release's report (every mechanism of part ``"preprocessing"``);
        None when nothing was released.
    delta_ : float or None
        The delta of the release (None when nothing was released).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` was a DataFrame with string column names.

"""


class PrivateClipper(_RangeTransformer):
    __doc__ = (
        """Clip every column to a private (or public) range.

    ``fit`` releases every column's range from noisy log-scale histograms
    (:class:`~dpglm.preprocessing.ranges.RangePlan`, all of ``(epsilon,
    delta)``), or takes the public ``bounds`` and charges nothing;
    ``transform`` clips each entry to its column's range. Sparse input stays
    sparse (its ranges contain 0).
"""
        + _RANGE_PARAMETERS_DOC
        + """
    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.privacy.budget import PrivacyBudget
    >>> X = np.random.default_rng(0).normal(100.0, 10.0, size=(20_000, 2))
    >>> budget = PrivacyBudget(1.0, 1e-6)
    >>> clipper = PrivateClipper(epsilon=0.5, budget=budget, random_state=0).fit(X)
    >>> clipper.low_, clipper.high_
    (array([64., 64.]), array([128., 128.]))
    >>> len(budget.charges), clipper.privacy_report_.parts.keys()
    (1, dict_keys(['preprocessing']))
    >>> PrivateClipper(bounds=[[0.0, 1.0], [-2.0, 2.0]]).fit_transform([[5.0, -3.0]])
    array([[ 1., -2.]])
    """
    )

    def __init__(self, *, epsilon=1.0, delta=None, budget=None, bounds=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.bounds = bounds
        self.random_state = random_state

    def transform(self, X):
        """``X`` with every entry clipped to its column's range (sparse stays sparse).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        ndarray or sparse matrix of shape (n_samples, n_features)
        """
        X, original = self._checked(X)
        clipped = self._clip(X)
        return _like(clipped, original) if sp.issparse(clipped) else clipped


class PrivateMinMaxScaler(_RangeTransformer):
    __doc__ = (
        """Map every column onto ``[0, 1]`` with its private (or public) range.

    ``fit`` releases the ranges as :class:`PrivateClipper` does (or takes the
    public ``bounds``, free); ``transform`` maps ``(clip(x) - low) / (high -
    low)``, and a column of zero width to 0. Dense input; sparse input only
    when every ``low`` is 0 (its zeros then stay zeros; the ranges of sparse
    input are widened to contain 0, so this means nonnegative columns):
    otherwise a ``ValueError``, raised before the charge when the bounds are
    public, after it when the refusal depends on the released ranges.
"""
        + _RANGE_PARAMETERS_DOC
        + """
    Examples
    --------
    >>> scaler = PrivateMinMaxScaler(bounds=[[0.0, 10.0], [-1.0, 1.0], [3.0, 3.0]])
    >>> scaler.fit_transform([[5.0, 2.0, 7.0], [-1.0, 0.0, 3.0]])
    array([[0.5, 1. , 0. ],
           [0. , 0.5, 0. ]])
    >>> scaler.privacy_report_ is None  # public bounds: nothing released, nothing charged
    True
    """
    )

    def __init__(self, *, epsilon=1.0, delta=None, budget=None, bounds=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.bounds = bounds
        self.random_state = random_state

    def _accepts_sparse(self) -> bool:
        # only nonnegative sparse columns: not a property of the estimator alone
        return False

    def _check_sparse(self, sparse, public):
        if sparse and public is not None:
            _refuse_sparse_shift(np.minimum(public[0], 0.0))

    def _learn(self, X, scaling, releases, n) -> dict:
        if sp.issparse(X):
            _refuse_sparse_shift(scaling.low)
        return {}

    def transform(self, X):
        """``(clip(x) - low) / (high - low)`` per column, in ``[0, 1]``; 0 for zero width.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Sparse only when every ``low_`` is 0.

        Returns
        -------
        ndarray or sparse matrix of shape (n_samples, n_features)
        """
        X, original = self._checked(X)
        width = self.high_ - self.low_
        divisor = np.where(width > 0, width, 1.0)
        if sp.issparse(X):
            _refuse_sparse_shift(self.low_)
            return _like(self._clip(X).multiply(1.0 / divisor), original)
        return (self._clip(X) - self.low_) / divisor


def _refuse_sparse_shift(low):
    shifted = np.flatnonzero(low != 0)
    if shifted.size:
        j = int(shifted[0])
        raise ValueError(
            f"PrivateMinMaxScaler maps low to 0: sparse input would lose its zeros, since "
            f"column {j} has low {low[j]:g} (sparse ranges are widened to contain 0, so any "
            "negative column shifts); give dense data (X.toarray()), or use "
            "PrivateStandardScaler(with_mean=False) or PrivateClipper"
        )


class PrivateStandardScaler(_RangeTransformer):
    """Standardise every column with a private mean and variance of its clipped values.

    ``fit`` releases, in **one plan charged once** (every event of part
    ``"preprocessing"``):

    1. the ranges ``[low_j, high_j]``, as :class:`PrivateClipper` does, with
       :data:`RANGE_SHARE` (0.3) of ``(epsilon, delta)`` (skipped when
       ``bounds`` are public);
    2. the column sums ``S1`` of ``u``, and ``S2`` of ``u**2``, where
       ``u_j = (clip(x_j) - c_j) / h_j`` maps the clipped column into
       ``[-1, 1]`` (``c_j``, ``h_j`` the centre and half-width of its range;
       sparse input: ``c_j = 0`` and ``h_j = max(|low_j|, |high_j|)``, its
       range containing 0; a column of zero width has ``u_j = 0``), one
       Gaussian event each, with equal noise multipliers calibrated so that
       the whole plan meets ``(epsilon, delta)``.

    **Sensitivities** (replace-one neighbours: one record ``x`` becomes
    ``x'``, ``n`` unchanged; the ranges are released before, so they are
    fixed and public when the sums are computed). Each sum changes by
    ``u(x') - u(x)`` only. Every coordinate of ``u`` lies in ``[-1, 1]``, so
    it changes by at most 2, and the L2 norm of the change of ``S1`` is at
    most ``2 sqrt(p)``; every coordinate of ``u**2`` lies in ``[0, 1]``, so
    ``S2`` changes by at most ``sqrt(p)``. Neither depends on the data. On the
    raw scale these are the bounds ``||high - low||_2`` for the sums of
    ``clip(x)`` (each coordinate moves by at most ``high_j - low_j``) and
    ``||M - m||_2 <= ||max(low**2, high**2)||_2`` for the sums of
    ``clip(x)**2`` (``x_j**2`` lies in ``[m_j, M_j]``, ``M_j = max(low_j**2,
    high_j**2)``, ``m_j = 0`` when the range contains 0, else ``min(low_j**2,
    high_j**2)``); releasing them would give every column noise of the norm
    of all the columns' widths, and a narrow column next to a wide one a
    useless mean. Releasing the sums of ``u`` instead gives column ``j``
    noise proportional to its own width: its mean's noise standard
    deviation is ``h_j sigma_1 / n``, ``sigma_1`` the noise of ``S1``.

    **Post-processing.** ``m1 = S1~ / n`` is clipped to the range of ``u``,
    ``m2 = S2~ / n``, and ``var_u = m2 - m1**2`` is clamped to
    ``[floor_j, max(cap_j, floor_j)]``: ``cap_j``, a quarter of the squared
    width of ``u``'s range (1 for dense data), is the largest variance values
    in a range can have; ``floor_j = max(((u_high - u_low) / n)**2,
    sigma_2 / n)``. Its first term, ``((high_j - low_j) / n)**2`` on the raw
    scale, is the square of what one record can move the column's mean: a
    smaller standard deviation is below the resolution of any statistic of
    the column, and it keeps the divisor positive without noise
    (``epsilon=inf``). Its second, the noise standard deviation of ``m2``, is
    what noise alone makes of a constant column: a released variance below it
    is within one noise deviation of 0, and would blow the column up by the
    noise's whim. Both are public (``n``, the ranges, the calibrated noise).
    Then ``mean_ = c + h m1``, ``var_ = h**2 var_u``, ``scale_ =
    sqrt(var_)`` (1 for a column of zero width, whose output is 0 with the
    mean and its ``low`` without).

    ``transform`` gives ``(clip(x) - mean_) / scale_`` (``clip(x) /
    scale_`` with ``with_mean=False``), which lies in
    ``[(low_ - mean_) / scale_, (high_ - mean_) / scale_]``:
    ``output_bounds_`` is the largest magnitude of those, over the columns,
    a public number (a function of released values) to give the next
    estimator as ``feature_bounds``.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy of the whole fit: the ranges' and the moments' releases
        (``inf``: released without noise, and the report says the fit is
        not private).
    delta : float or None, default=None
        ``None``: ``min(1 / n**2, 1e-5)`` for ``n`` records. Must be > 0 (the noise is
        Gaussian).
    budget : PrivacyBudget, optional
        Shared budget charged once by every fit (shared, never copied:
        ``clone`` keeps the same object).
    bounds : None, float, array-like of shape (n_features,) or (n_features, 2), default=None
        Public ranges: ``B`` (or one ``B_j`` per column) for ``[-B_j, B_j]``,
        or ``(low_j, high_j)`` rows; the moments then take all of
        ``(epsilon, delta)``. None: the ranges are released privately.
    with_mean : bool, default=True
        Centre the output; sparse input needs ``with_mean=False`` (its zeros
        would not stay zeros).
    random_state : None, int, SeedSequence, Generator or NoiseSource, default=None
        The releases' noise (keyed to the budget charge).

    Attributes
    ----------
    low_, high_ : ndarray of shape (n_features,)
        The ranges every entry is clipped to (sparse input: widened to
        contain 0, so that zeros stay zeros).
    privacy_report_ : PrivacyReport or None
        The release's report (every mechanism of part ``"preprocessing"``);
        None when nothing was released.
    delta_ : float or None
        The delta of the release (None when nothing was released).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` was a DataFrame with string column names.
    mean_, var_, scale_ : ndarray of shape (n_features,)
        The released mean and variance of every clipped column, and the
        divisor of ``transform``.
    output_bounds_ : float
        Bound on the magnitude of every output entry (1 when every column
        is constant).
    n_samples_seen_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from dpglm.privacy.budget import PrivacyBudget
    >>> X = np.random.default_rng(0).normal([100.0, 0.0], [10.0, 0.01], size=(20_000, 2))
    >>> budget = PrivacyBudget(1.0, 1e-6)
    >>> scaler = PrivateStandardScaler(budget=budget, random_state=0).fit(X)
    >>> Z = scaler.transform(X)
    >>> np.round(Z.mean(axis=0), 1) + 0.0, np.round(Z.std(axis=0), 1)
    (array([0., 0.]), array([1., 1.]))
    >>> [m.part for m in scaler.privacy_report_.mechanisms], len(budget.charges)
    (['preprocessing', 'preprocessing', 'preprocessing', 'preprocessing'], 1)
    >>> bool(np.abs(Z).max() <= scaler.output_bounds_)
    True
    """

    _moments = True

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        budget=None,
        bounds=None,
        with_mean=True,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.budget = budget
        self.bounds = bounds
        self.with_mean = with_mean
        self.random_state = random_state

    def _accepts_sparse(self) -> bool:
        return self.with_mean is False

    def _check_params(self):
        _check_with_mean(self.with_mean)
        return super()._check_params()

    def _check_sparse(self, sparse, public):
        if sparse and self.with_mean:
            raise ValueError(
                "Cannot center sparse matrices: pass `with_mean=False` instead (centring "
                "would make every zero nonzero); PrivateStandardScaler then only scales"
            )

    def _moment_events(self, n_features) -> tuple:
        root = math.sqrt(n_features)
        return (
            GaussianEvent(
                noise_multiplier=1.0, sensitivity=2.0 * root, label=SUMS_LABEL, part=PART
            ),
            GaussianEvent(noise_multiplier=1.0, sensitivity=root, label=SQUARES_LABEL, part=PART),
        )

    def _learn(self, X, scaling, releases, n) -> dict:
        p = X.shape[1]
        root = math.sqrt(p)
        u = scaling.transform(X)
        if sp.issparse(u):
            sums = np.asarray(u.sum(axis=0)).ravel()
            squares = np.asarray(u.multiply(u).sum(axis=0)).ravel()
        else:
            sums, squares = u.sum(axis=0), (u * u).sum(axis=0)
        first, second = releases
        m1 = np.asarray(first.add(sums, sensitivity=2.0 * root), dtype=float) / n
        m2 = np.asarray(second.add(squares, sensitivity=root), dtype=float) / n
        centre, half = scaling.centre, scaling.scale
        width = half > 0
        divisor = np.where(width, half, 1.0)
        u_low, u_high = (scaling.low - centre) / divisor, (scaling.high - centre) / divisor
        # post-processing of released values and public constants only (see the docstring)
        m1 = np.clip(m1, u_low, u_high)
        floor = np.maximum(((u_high - u_low) / n) ** 2, second.scale(root, over=n))
        cap = np.maximum(((u_high - u_low) / 2.0) ** 2, floor)
        var_u = np.minimum(np.maximum(m2 - m1**2, floor), cap)
        mean = np.where(width, centre + half * m1, scaling.low)
        var = np.where(width, half**2 * var_u, 0.0)
        scale = np.where(width, np.sqrt(var), 1.0)
        if self.with_mean:
            reach = np.maximum(np.abs(scaling.low - mean), np.abs(scaling.high - mean))
        else:
            reach = np.maximum(np.abs(scaling.low), np.abs(scaling.high))
        bound = float(np.max(reach / scale))
        return {
            "mean_": mean,
            "var_": var,
            "scale_": scale,
            "output_bounds_": bound if bound > 0 else 1.0,
            "n_samples_seen_": int(n),
        }

    def transform(self, X):
        """``(clip(x) - mean_) / scale_`` (without the mean when ``with_mean=False``).

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame of shape (n_samples, n_features)
            Sparse only with ``with_mean=False``.

        Returns
        -------
        ndarray or sparse matrix of shape (n_samples, n_features)
            Every entry within ``[-output_bounds_, output_bounds_]``.
        """
        X, original = self._checked(X)
        if sp.issparse(X):
            self._check_sparse(True, None)
            return _like(self._clip(X).multiply(1.0 / self.scale_), original)
        clipped = self._clip(X)
        if self.with_mean:
            clipped = clipped - self.mean_
        return clipped / self.scale_


# -- leaks in a pipeline -----------------------------------------------------------------------


def _fitted_attributes(step) -> list:
    # scikit-learn's convention (check_is_fitted): attributes ending with "_"
    return sorted(a for a in vars(step) if a.endswith("_") and not a.startswith("__"))


def leaf_steps(steps) -> list:
    """``(name, step)`` for every step of ``steps`` that is not a container, nested ones too.

    ``steps`` are ``(name, step)`` pairs, as ``Pipeline.steps``. A pipeline,
    a ``FeatureUnion`` or a ``ColumnTransformer`` gives the steps it holds
    (a fitted ``ColumnTransformer`` its fitted clones, ``transformers_``),
    named ``outer__inner`` as ``set_params`` spells them; every step of a
    nested pipeline counts, its last one too (it transforms). ``None``,
    ``"passthrough"`` and ``"drop"`` hold nothing.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline, make_union
    >>> union = make_union(PrivateClipper(), "passthrough")
    >>> [name for name, _ in leaf_steps([("prep", make_pipeline(union, PrivateClipper()))])]
    ['prep__featureunion__privateclipper', 'prep__privateclipper']
    """
    found = []
    for name, step in steps:
        if step is None or (isinstance(step, str) and step in ("passthrough", "drop")):
            continue
        if isinstance(step, Pipeline):
            held = step.steps
        elif isinstance(step, FeatureUnion):
            held = step.transformer_list
        elif isinstance(step, ColumnTransformer):
            fitted = getattr(step, "transformers_", step.transformers)
            held = [(inner, s) for inner, s, _ in fitted]
        else:
            found.append((name, step))
            continue
        found += leaf_steps([(f"{name}__{inner}", s) for inner, s in held])
    return found


def _leaks_of(name, step) -> list:
    """``(name, step, what)`` for a step that is not a container, if it learned without
    privacy."""
    report = getattr(step, "privacy_report_", None)
    if isinstance(step, _RangeTransformer) or isinstance(report, PrivacyReport):
        if report is not None and report.non_private:
            return [(name, step, "released without noise (epsilon=inf)")]
        if report is not None and report.warnings:
            return [(name, step, "; ".join(report.warnings))]
        return []
    learned = [a for a in _fitted_attributes(step) if a not in SHAPE_ATTRIBUTES]
    if learned:
        return [(name, step, f"learned {', '.join(learned)} without privacy")]
    return []


def check_pipeline(pipeline) -> list:
    """The steps of a fitted pipeline, before its last, that learned from the data without privacy.

    The final step's guarantee covers what it reads; the steps before it
    transform the records it reads, and whatever they learned from the data
    reaches it (and its output) without noise. The rule, for each step
    before the last (and every step nested in it: a pipeline, a
    ``FeatureUnion``, a ``ColumnTransformer``, judged by what they hold):

    - private: one of dpglm's private transformers (or any object with a
      ``privacy_report_``) whose release had noise (``epsilon < inf``) and
      no leak, or which released nothing (public ``bounds``);
    - private: a transformer whose fitted attributes (scikit-learn's
      convention: names ending with ``_``) are all in
      :data:`SHAPE_ATTRIBUTES`, which depend on the data's public shape only
      (``FunctionTransformer``, ``Normalizer``, ``PolynomialFeatures``);
    - ``"passthrough"``, ``"drop"`` and ``None``: nothing learned;
    - otherwise it leaks: ``StandardScaler`` (means and variances),
      ``MinMaxScaler``, ``RobustScaler``, ``MaxAbsScaler``,
      ``OneHotEncoder`` (the categories seen), ``SplineTransformer``, ...

    A container's own choices (e.g. a ``ColumnTransformer`` deciding on
    sparse output from the density of what it produced) are not judged.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
        Fitted.

    Returns
    -------
    list of (str, object)
        The name (nested names joined by ``__``, as ``set_params`` spells
        them) and the step, for every step that leaks; each also warns
        :class:`~dpglm.exceptions.PrivacyLeakWarning`.

    Raises
    ------
    TypeError
        ``pipeline`` is not a scikit-learn ``Pipeline``.
    sklearn.exceptions.NotFittedError
        It is not fitted.

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = np.arange(8.0).reshape(4, 2), np.arange(4.0)
    >>> leaky = make_pipeline(StandardScaler(), LinearRegression()).fit(X, y)
    >>> with warnings.catch_warnings(record=True) as shown:
    ...     warnings.simplefilter("always")
    ...     found = check_pipeline(leaky)
    >>> [name for name, _ in found], shown[0].category.__name__
    (['standardscaler'], 'PrivacyLeakWarning')
    >>> check_pipeline(make_pipeline(PrivateClipper(bounds=10.0), LinearRegression()).fit(X, y))
    []
    """
    if not isinstance(pipeline, Pipeline):
        raise TypeError(f"check_pipeline takes a sklearn Pipeline, got {type(pipeline).__name__}")
    check_is_fitted(pipeline)
    found = leaking_steps(pipeline.steps[:-1])
    for message in leak_messages(found):
        warn_privacy_leak(message, stacklevel=2)
    return [(name, step) for name, step, _ in found]


def leaking_steps(steps) -> list:
    """``(name, step, what)`` for every fitted step of ``steps`` (``(name, step)`` pairs, as
    ``Pipeline.steps``) that learned from the data without privacy, by the rule of
    :func:`check_pipeline`; nested containers are searched and named ``outer__inner``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.preprocessing import MinMaxScaler
    >>> scaler = MinMaxScaler().fit(np.array([[0.0], [2.0]]))
    >>> [(name, what[:28]) for name, _, what in leaking_steps([("scale", scaler)])]
    [('scale', 'learned data_max_, data_min_')]
    """
    return [leak for name, step in leaf_steps(steps) for leak in _leaks_of(name, step)]


def leak_messages(found) -> list:
    """The :class:`~dpglm.exceptions.PrivacyLeakWarning` message of each ``(name, step,
    what)`` of :func:`leaking_steps`.

    Examples
    --------
    >>> from sklearn.preprocessing import StandardScaler
    >>> leak_messages([("scale", StandardScaler(), "learned mean_ without privacy")])[0][:40]
    "pipeline step 'scale' (StandardScaler) l"
    """
    return [
        f"pipeline step {name!r} ({type(step).__name__}) {what}: it transforms the records "
        "the final step reads, so the final step's guarantee does not cover the pipeline; "
        "use dpglm's private transformers (PrivateStandardScaler, PrivateMinMaxScaler, "
        "PrivateClipper) or public bounds"
        for name, step, what in found
    ]
