"""Privacy-leak capture is per fit: fits in threads record exactly their own leaks.

The warnings module's filters and hooks are global to the process, so a
capture built on ``warnings.catch_warnings`` mixes up fits that run at the
same time (joblib or Dask threads, a thread pool): one fit's leak lands in
another's report, or in none. Each test here runs many fits at once, half of
them leaking (DP-CD without feature bounds reads its smoothness constants
from the data), and checks every report against its own fit.
"""

import concurrent.futures
import warnings

import numpy as np
import pytest

from dpglm.estimators import DPLogisticRegression
from dpglm.exceptions import PrivacyLeakWarning
from dpglm.tuning import PrivateSearchCV

RNG = np.random.default_rng(0)
# wide enough that reading the smoothness constants takes a while: the fits overlap
X = RNG.uniform(-1, 1, (4000, 50))
Y = np.where(X[:, 0] - X[:, 1] > 0, "yes", "no")
LEAK = "coordinate-wise smoothness constants M_j computed from the raw data"

# shown to the user, but not the point here (and catch_warnings in threads would race)
pytestmark = pytest.mark.filterwarnings("ignore::dpglm.exceptions.PrivacyLeakWarning")


def _classifier(leaky, **kwargs):
    # a leak only where asked for: smoothness constants read from the data
    bounds = {"smoothness": "data"} if leaky else {"feature_bounds": 1.0, "smoothness": "bounds"}
    return DPLogisticRegression(solver="dp-cd", passes=1.0, **bounds, **kwargs)


def _fit(i):
    leaky = i % 2 == 0
    model = _classifier(leaky, random_state=i).fit(X, Y)
    return leaky, model.privacy_report_.warnings


def test_threaded_fits_record_exactly_their_own_leaks():
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        results = list(pool.map(_fit, range(400)))
    wrong = [
        i
        for i, (leaky, leaks) in enumerate(results)
        if len(leaks) != int(leaky) or not all(LEAK in leak for leak in leaks)
    ]
    assert wrong == []


def _search(i):
    leaky = i % 2 == 0
    search = PrivateSearchCV(
        _classifier(leaky),
        {"alpha": [1e-3, 1e-2]},
        epsilon=1.0,
        delta=1e-6,
        mean_repetitions=3.0,
        shape=1.0,
        random_state=i,
    )
    search.fit(X[:1000], Y[:1000])
    return leaky, search.privacy_report_.warnings


def test_threaded_searches_record_exactly_their_own_leaks():
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        results = list(pool.map(_search, range(12)))
    for leaky, leaks in results:
        if leaky:
            # the dry run of each candidate, and the runs
            assert len(leaks) == 3 and all(LEAK in leak for leak in leaks)
        else:
            assert leaks == ()


def test_a_leak_is_still_a_warning_for_the_user():
    with pytest.warns(PrivacyLeakWarning, match="M_j computed from the raw data"):
        model = _classifier(True, random_state=0).fit(X[:500], Y[:500])
    assert len(model.privacy_report_.warnings) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all without a leak
        assert _classifier(False, random_state=0).fit(X[:500], Y[:500]).privacy_report_.guarantee
