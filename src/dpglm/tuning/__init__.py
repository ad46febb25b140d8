"""Private hyperparameter search: repeat-and-select with the whole search accounted.

Training one model per candidate and keeping the best is not private, even
when every fit is: the choice itself reveals the data, and every fit costs its
own budget. :class:`PrivateSearchCV` runs the repeat-and-select algorithm of
Papernot and Steinke (2022, "Hyperparameter tuning with Renyi differential
privacy") instead, and charges the whole search to the budget once, before
it touches the data.

The base mechanism ``Q`` (one run)
    Draw a candidate uniformly from a data-independent list; fit the
    estimator privately on the training split with its own calibrated solver
    at ``(fit_epsilon, delta)``; release its validation score on the held-out
    split plus Laplace noise: accuracy for classifiers, minus the squared (or
    absolute) error clipped to ``error_bound`` for regressors, each a mean of
    ``n_val`` per-record terms in a range of width ``R`` (1 or
    ``error_bound``), so one replaced record moves it by at most ``R / n_val``.
The search
    Draw the number of runs ``K`` (Poisson of mean ``mean_repetitions`` by
    default, or dp-accounting's truncated negative binomial of shape
    ``shape``), run ``Q`` ``K`` times independently and release the model of
    the run with the highest noisy score, that score, and nothing else:
    neither ``K`` nor the other runs (they are not even kept).

The split
    ``n_val = round(validation_fraction * n)`` records drawn uniformly
    without replacement (without the data) are the validation split, the
    others the training split, the same for every run. Replace-one
    neighbours, the relation of every dpglm fit (``n`` is public, and so are
    the split sizes): the changed record is in one split, so the fit sees a
    replace-one neighbour or the score moves by at most ``R / n_val``.

Accounting: the plan of one run is the composition of the fit's calibrated
plan and the noisy score (sequential composition, valid whichever split the
neighbouring record falls in; under replace-one their maximum would do, but
dp-accounting has no such event and the sum is a valid, looser bound). When
the candidates have different fit plans (e.g. different ``passes``), a run
is a uniform mixture of them, whose Renyi divergence is at most the largest
of theirs; the plan of a run then holds all of them, a valid (looser)
bound. The search is one
:class:`~dpglm.privacy.events.RepeatAndSelectEvent` of that plan, accounted
with Renyi DP (Theorems 2 and 6 of the paper, through dp-accounting's
``RepeatAndSelectDpEvent``). The per-run budget is calibrated so that the
whole search meets the target ``(epsilon, delta)``.

Modules
-------
:mod:`~dpglm.tuning.search` holds :class:`PrivateSearchCV`;
:mod:`~dpglm.tuning.repetitions` the number of runs;
:mod:`~dpglm.tuning.scoring` the validation scores;
:mod:`~dpglm.tuning.planning` the plan of a search, from its candidates'
planned fits; :mod:`~dpglm.tuning.pipelines` a search over a scikit-learn
``Pipeline`` (its private steps fitted once, at their share, before the
search of its last step). Every public name is imported here.

Examples
--------
>>> import numpy as np
>>> from dpglm.estimators import DPLogisticRegression
>>> from dpglm.tuning import PrivateSearchCV
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (4000, 3))
>>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
>>> search = PrivateSearchCV(
...     DPLogisticRegression(solver="dp-cd", feature_bounds=1.0, smoothness="bounds"),
...     {"alpha": [1e-4, 1e-3, 0.5]},
...     epsilon=2.0,
...     delta=1e-6,
...     mean_repetitions=5,
...     shape=1.0,  # geometric number of runs: at least one
...     random_state=0,
... ).fit(X, y)
>>> search.privacy_report_.epsilon <= 2.0, search.privacy_report_.accountant
(True, 'gdp + rdp (basic composition)')
>>> list(search.privacy_report_.parts)  # the label set first, selected privately
['label selection', 'hyperparameter search']
>>> round(search.fit_epsilon_, 2), round(search.score_epsilon_, 2)
(0.76, 0.19)
>>> search.best_estimator_.score(X, y) > 0.9
True
"""

from dpglm.tuning.planning import CALIBRATION_RTOL
from dpglm.tuning.repetitions import (
    MAX_MEAN_REPETITIONS,
    draw_repetitions,
    repetitions_gamma,
    repetitions_mean,
)
from dpglm.tuning.scoring import CLASSIFIER_SCORING, REGRESSOR_SCORING
from dpglm.tuning.search import RESERVED, PrivateSearchCV

__all__ = [
    "CALIBRATION_RTOL",
    "CLASSIFIER_SCORING",
    "MAX_MEAN_REPETITIONS",
    "REGRESSOR_SCORING",
    "RESERVED",
    "PrivateSearchCV",
    "draw_repetitions",
    "repetitions_gamma",
    "repetitions_mean",
]
