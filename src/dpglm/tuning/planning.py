"""The plan of a search, known before the data is read.

Each candidate's fit plan comes from the estimator
(:meth:`~dpglm.estimators.base.DPLinearModel.planned_fit`): a function of
its hyperparameters and of the training split's shape, found through the
solver registry without fitting anything. :class:`Planner` calibrates the
per-run epsilon from those plans so that the whole search meets its target,
and every real run gets a :class:`PlanGuard` that checks that it charges the
plan the search accounted (else :class:`PlanMismatchError`).
"""

from __future__ import annotations

import math
from dataclasses import replace

from sklearn.base import clone

from dpglm.exceptions import CalibrationError, PlanError, PrivacyError
from dpglm.privacy.accounting import account
from dpglm.privacy.events import LaplaceEvent, PrivacyPlan, RepeatAndSelectEvent
from dpglm.privacy.spending import accounting_key

#: the calibrated search's epsilon lies in [(1 - CALIBRATION_RTOL) epsilon, epsilon]
CALIBRATION_RTOL = 1e-3


class PlanMismatchError(PrivacyError):
    """A run's fit calibrated another plan than the accounted one: raised, never a failed run."""


class PlanGuard:
    """Stands in for a budget inside a search: the fit must run the plan the search accounted.

    Solvers charge before they read the data for training, so a fit whose plan
    differs from the accounted one stops before it trains.
    """

    persistent = False

    def __init__(self, expected: PrivacyPlan):
        self.expected = accounting_key(expected, parts=False)

    def charge(self, plan, *, label=""):
        if accounting_key(plan, parts=False) != self.expected:
            raise PlanMismatchError(
                f"the fit {label!r} calibrated a plan that differs from the one the search "
                "accounted (its plan depends on more than the data's shape and its "
                "hyperparameters); the search stops before training it"
            )


def _with_candidate(err, params):
    """``err`` again, its message prefixed with the candidate (or as is, if that fails)."""
    try:
        return type(err)(f"candidate {params}: {err}")
    except Exception:
        return err


class Planner:
    """The plan of a search, from its candidates' fit plans on the training split's shape.

    A candidate's fit plan is a function of the shape and the hyperparameters
    only (:meth:`~dpglm.estimators.base.DPLinearModel.planned_fit`): nothing is
    fitted and no record is read. The per-run epsilon ``e`` (fit
    ``(1 - score_share) e``, score ``score_share e``) is searched on a log
    scale (secant steps in a shrinking bracket) until the accounted search lies
    within ``CALIBRATION_RTOL`` below the target; every fit plan is then
    computed at the final value.
    """

    def __init__(self, estimator, candidates, settings, delta, shape_info, n_val):
        self.n_val = n_val
        self.estimator = estimator
        self.candidates = candidates
        self.settings = settings
        self.delta = delta
        self.shape_info = shape_info
        self.leaks = ()
        self.n_groups = 1
        self._cache = {}
        self._representatives = None

    def fit_plan(self, index, fit_epsilon):
        """The plan candidate ``index`` charges at ``fit_epsilon``, and its leak warnings."""
        key = (index, fit_epsilon)
        if key in self._cache:
            return self._cache[key]
        params = self.candidates[index]
        n_samples, n_features, classifier, sparse, n_classes = self.shape_info
        try:
            model = clone(self.estimator).set_params(
                **params, epsilon=fit_epsilon, delta=self.delta
            )
            more = {"n_classes": n_classes} if classifier else {}
            plan, leaks = model.planned_fit(n_samples, n_features, sparse=sparse, **more)
        except Exception as err:
            raise _with_candidate(err, params) from err
        leaks = tuple(f"candidate {params}: {message}" for message in leaks)
        self._cache[key] = (plan, leaks)
        return plan, leaks

    def search_plan(self, epsilon_rep, final=False):
        """The search's plan at per-run epsilon ``epsilon_rep``; all candidates if ``final``."""
        fit_epsilon = self.settings["share"].rest_of(epsilon_rep)
        indices = range(len(self.candidates)) if final else self._representatives
        plans, groups, leaks = {}, {}, []
        for i in indices:
            plan, found = self.fit_plan(i, fit_epsilon)
            plans[i] = plan
            groups.setdefault(accounting_key(plan, parts=False), []).append(i)
            leaks.extend(found)
        relations = {key.neighbouring for key in groups}
        if len(relations) > 1:
            by_relation = {
                r: [i for key, members in groups.items() if key.neighbouring == r for i in members]
                for r in sorted(relations)
            }
            raise PlanError(
                "the candidates' fits are analysed under different neighbouring relations "
                f"(candidates by relation: {by_relation}); one search needs one relation "
                "(e.g. do not mix solver='dp-sgd' with Poisson sampling and the coordinate "
                "solvers)"
            )
        (relation,) = relations
        if final:
            self.leaks = tuple(dict.fromkeys(leaks))
            self.n_groups = len(groups)
        events = []
        for members in groups.values():
            which = (
                "every candidate"
                if len(members) == len(self.candidates)
                else f"candidates {', '.join(map(str, members))}"
            )
            for e in plans[members[0]].events:
                events.append(replace(e, label=f"{e.label}; fit of {which}".lstrip("; ")))
        score = LaplaceEvent(
            noise_multiplier=1.0 / self.settings["share"].of(epsilon_rep),
            sensitivity=self.settings["score_range"] / self.n_val,
            label="noisy validation score",
            part="validation score",
        )
        base = PrivacyPlan((*events, score), relation)
        search = RepeatAndSelectEvent(
            inner=base,
            mean=self.settings["mean"],
            shape=self.settings["shape"],
            label="repeat-and-select: the best of the runs",
        )
        return PrivacyPlan((search,), relation), plans, score

    def cost(self, epsilon_rep, final=False):
        """Log of the search's epsilon over the target, at per-run epsilon ``epsilon_rep``."""
        plan = self.search_plan(epsilon_rep, final)[0]
        epsilon = account(plan, self.delta, "rdp").epsilon
        return math.log(max(epsilon, 1e-300) / self.settings["epsilon"])

    def _group_representatives(self, fit_epsilon):
        seen = {}
        for i in range(len(self.candidates)):
            seen.setdefault(accounting_key(self.fit_plan(i, fit_epsilon)[0], parts=False), i)
        return list(seen.values())

    def calibrate(self):
        """The largest per-run epsilon found whose search meets the target (within rtol)."""
        target = self.settings["epsilon"]
        share = self.settings["share"]
        # the iterations use one candidate per distinct fit plan; the value returned is
        # checked with every candidate
        self._representatives = self._group_representatives(share.rest_of(target))
        tolerance = math.log1p(-CALIBRATION_RTOL)
        points, lo, hi = [], None, None
        x = math.log(target)
        for _ in range(60):
            g = self.cost(math.exp(x))
            if tolerance <= g <= 0:
                g = self.cost(math.exp(x), final=True)
                if g <= 0:
                    return math.exp(x)
                # a candidate's plan changed group at this budget: regroup, go on
                self._representatives = self._group_representatives(share.rest_of(math.exp(x)))
            points.append((x, g))
            if g <= 0 and (lo is None or x > lo[0]):
                lo = (x, g)
            if g > 0 and (hi is None or x < hi[0]):
                hi = (x, g)
            x = _next_point(points, lo, hi, 0.5 * tolerance)
            if x < math.log(target) - 40.0:
                break
        if lo is not None and self.cost(math.exp(lo[0]), final=True) <= 0:
            return math.exp(lo[0])
        raise CalibrationError(
            f"no per-run budget makes the search meet epsilon={target:g} at "
            f"delta={self.delta:g}: the repeat-and-select overhead alone exceeds it "
            "(fewer repetitions or a larger delta help)"
        )


def _next_point(points, lo, hi, aim):
    """Next log per-run epsilon: a secant step towards ``g = aim``, kept inside the bracket."""
    x, g = points[-1]
    slope = 1.0
    if len(points) >= 2:
        (x0, g0), (x1, g1) = points[-2], points[-1]
        if x1 != x0 and (g1 - g0) / (x1 - x0) > 0.05:
            slope = (g1 - g0) / (x1 - x0)
    if lo is not None and hi is not None:
        (x0, g0), (x1, g1) = lo, hi
        x = x0 - (g0 - aim) * (x1 - x0) / (g1 - g0)
        width = x1 - x0
        if not x0 + 0.05 * width <= x <= x1 - 0.05 * width:
            x = 0.5 * (x0 + x1)
        return x
    return x - max(-5.0, min(5.0, (g - aim) / slope))
