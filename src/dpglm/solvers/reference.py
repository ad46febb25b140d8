"""Non-private reference solutions: the optimum ``F*`` used for relative suboptimality.

``solve_reference(problem)`` returns a :class:`ReferenceSolution` whose
objective is within relative ``1e-9`` of the optimum for every datafit and
penalty the library uses, with a certificate of how close it is:

* least squares with no penalty or ridge, dense: a direct linear least-squares
  solve;
* the other smooth datafits (and sparse least squares) with none / L2 / L1 /
  elastic net / box: L-BFGS-B on the column-scaled problem, the L1 part split
  into positive and negative parts so that the problem is smooth with bounds;
* the L1-ball constraint: the L1-penalised solution whose norm equals the
  radius (the two problems share their optimum), found by Brent's method;
* the hinge loss with none / L1 / box / L1 ball: the equivalent linear
  programme, solved by HiGHS; with L2: dual coordinate descent on its
  box-constrained dual, the intercept enforced by an augmented Lagrangian.

The certificate is a duality gap ``F(theta) - D(u) >= F(theta) - F*`` built from
the datafit's conjugate and the penalty's (Fenchel duality) where the penalty
allows it, and otherwise the largest violation of the coordinate-wise optimality
conditions.

Everything here reads the data without privacy. It exists to measure private
solvers, never to produce a model that is released.

Examples
--------
>>> import numpy as np
>>> from dpglm.penalties import L1
>>> from dpglm.problem import Problem
>>> from dpglm.solvers.reference import solve_reference
>>> rng = np.random.default_rng(0)
>>> X = rng.standard_normal((50, 3))
>>> y = X @ np.array([1.0, 0.0, -2.0]) + rng.standard_normal(50)
>>> sol = solve_reference(Problem(X, y, "squared", L1(0.1)))
>>> sol.certified, bool(sol.gap <= 1e-12)
(True, True)
"""

from __future__ import annotations

import copy
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq, linprog, minimize
from scipy.sparse.linalg import LinearOperator, cg

from dpglm._kernels import svm_dual_epochs_csr
from dpglm.access.columns import column_mean_squares
from dpglm.datafits import Hinge, Squared
from dpglm.penalties import L1, L2, Box, L1Ball, NoPenalty
from dpglm.problem import coordinate_penalties

#: relative accuracy the reference guarantees on the optimal objective
TARGET_RTOL = 1e-9


@dataclass(frozen=True)
class ReferenceSolution:
    """A (near-)optimal solution of a problem, with its certificate.

    Attributes
    ----------
    theta : ndarray of shape (n_coords,)
        Coefficients, then the intercept when the problem has one.
    objective : float
        ``F(theta)``.
    gap : float
        Duality gap, an upper bound on ``objective - F*``; ``nan`` when the
        penalty has no usable conjugate (then see ``violation``).
    violation : float
        Largest coordinate-wise violation of the optimality conditions; an
        optimality measure for smooth datafits with separable penalties only
        (for the hinge loss it depends on the subgradient chosen, and for the
        L1 ball it treats each coordinate with the others fixed).
    method : str
        The algorithm that produced ``theta``.
    """

    theta: np.ndarray
    objective: float
    gap: float
    violation: float
    method: str

    @property
    def certified(self) -> bool:
        """Whether ``gap`` proves ``objective`` within ``TARGET_RTOL`` of ``F*``."""
        return bool(self.gap <= TARGET_RTOL * max(abs(self.objective), 1e-300))


def solve_reference(problem, *, max_iter: int = 200_000) -> ReferenceSolution:
    """Solve ``problem`` without privacy to high accuracy.

    Parameters
    ----------
    problem : dpglm.problem.Problem
        The problem to solve.
    max_iter : int, default=200000
        Iteration cap of the iterative methods.

    Returns
    -------
    ReferenceSolution

    Raises
    ------
    NotImplementedError
        For the hinge loss with an elastic-net penalty, which no solver here
        handles to the required accuracy.
    """
    penalty = problem.penalty
    dual_point = None
    if isinstance(problem.datafit, Hinge):
        l1, l2 = _strengths(penalty)
        if l2 > 0 and l1 == 0:
            theta, dual_point = _hinge_l2(problem, max_iter)
            method = "dual coordinate descent"
        elif l2 == 0:
            theta, dual_point = _hinge_lp(problem)
            method = "linear programme (HiGHS)"
        else:
            raise NotImplementedError(f"no reference solver for the hinge loss with {penalty!r}")
    elif problem.n_outputs > 1:
        theta, method = _lbfgs(problem, max_iter), "L-BFGS-B (multinomial)"
    elif isinstance(penalty, L1Ball):
        theta, method = (
            _l1_ball(problem, max_iter),
            "L1 path at the ball's radius (L-BFGS-B + Newton)",
        )
    elif (
        isinstance(problem.datafit, Squared)
        and isinstance(penalty, NoPenalty | L2)
        and not sp.issparse(problem.features)
    ):
        theta, method = _least_squares(problem), "direct least squares"
    else:
        theta, method = _lbfgs(problem, max_iter), "L-BFGS-B"
    return ReferenceSolution(
        theta=theta,
        objective=problem.objective(theta),
        gap=duality_gap(problem, theta, dual_point),
        violation=problem.optimality_violation(theta),
        method=method,
    )


# -- certificates ----------------------------------------------------------------------


def _strengths(penalty):
    """``(l1, l2)`` of a penalty uniform across coordinates, from its kernel description.

    Zero for the L1 ball, which has no L1 or L2 term.
    """
    if not penalty.separable:
        return 0.0, 0.0
    l1, l2, _, _ = penalty.prox_params(1)
    return float(l1[0]), float(l2[0])


def _balance(u):
    """Scale the larger-signed part of ``u`` down so that ``sum(u) == 0``.

    Every datafit's conjugate domain is an interval containing 0, so moving
    entries towards 0 keeps ``u`` dual-feasible while meeting the constraint
    the unpenalised intercept imposes.
    """
    pos = u[u > 0].sum()
    neg = -u[u < 0].sum()
    if pos > neg:
        return np.where(u > 0, u * (neg / pos), u)
    if neg > pos:
        return np.where(u < 0, u * (pos / neg), u)
    return u


def _penalty_conjugate(penalty, v, p):
    """``psi*(v)`` and a factor ``kappa <= 1`` to scale the dual point by first.

    Returns ``(None, 1)`` when the conjugate is an indicator the dual point
    cannot be scaled into (no penalty), so no gap exists.
    """
    l1, l2 = _strengths(penalty)
    if isinstance(penalty, L1Ball):
        return (lambda vv: penalty.radius * np.max(np.abs(vv), initial=0.0)), 1.0
    if isinstance(penalty, Box):
        _, _, lo, hi = penalty.prox_params(p)

        def support(vv):
            with np.errstate(invalid="ignore"):
                terms = np.where(vv > 0, hi * vv, np.where(vv < 0, lo * vv, 0.0))
            return float(np.sum(terms))

        return support, 1.0
    if l2 > 0:
        return (lambda vv: float(np.sum(np.maximum(np.abs(vv) - l1, 0.0) ** 2)) / (2 * l2)), 1.0
    if l1 > 0:
        top = np.max(np.abs(v), initial=0.0)
        return (lambda vv: 0.0), (min(1.0, l1 / top) if top > 0 else 1.0)
    return None, 1.0


def duality_gap(problem, theta, u=None) -> float:
    """Fenchel duality gap at ``theta``: an upper bound on ``F(theta) - F*``.

    The dual point is ``u = l'(z)`` (or the one given), balanced to sum to zero
    when there is an intercept and scaled into the domain of the penalty's
    conjugate; the dual objective is
    ``D(u) = -(1/n) sum_i l*(u_i) - psi*(-X^T u / n)``.

    Parameters
    ----------
    problem : dpglm.problem.Problem
    theta : ndarray of shape (n_coords,)
    u : ndarray of shape (n_samples,), optional
        Dual point; defaults to the per-sample derivatives at ``theta``.

    Returns
    -------
    float
        The gap (``>= 0`` up to rounding), or ``nan`` when the penalty has no
        finite conjugate at any balanced dual point (no penalty at all).
    """
    if problem.n_outputs > 1:
        return np.nan  # the multinomial conjugate is not implemented: see the violation
    u = problem.derivatives(theta) if u is None else np.asarray(u, dtype=float)
    if problem.fit_intercept:
        u = _balance(u)
    n, p = problem.n_samples, problem.n_features
    v = -np.asarray(problem.X.T @ u).ravel() / n
    conjugate, kappa = _penalty_conjugate(problem.penalty, v, p)
    if conjugate is None:
        return np.nan
    u, v = kappa * u, kappa * v
    dual = -np.mean(problem.datafit.conjugate(u, problem.y)) - conjugate(v)
    return float(problem.objective(theta) - dual)


# -- least squares ---------------------------------------------------------------------


def _least_squares(problem):
    X, y, n = problem.X, problem.y, problem.n_samples
    A = np.column_stack([X, np.ones(n)]) if problem.fit_intercept else np.asarray(X)
    b = y
    alpha = _strengths(problem.penalty)[1]
    if alpha > 0:
        # ridge as ordinary least squares on rows sqrt(n alpha) I appended (not the intercept)
        ridge = np.sqrt(n * alpha) * np.eye(problem.n_features, problem.n_coords)
        A = np.vstack([A, ridge])
        b = np.concatenate([y, np.zeros(problem.n_features)])
    return np.linalg.lstsq(A, b, rcond=None)[0]


# -- smooth datafits: L-BFGS-B -----------------------------------------------------------


def _column_scales(X):
    scale = np.sqrt(column_mean_squares(X))
    return np.where(scale > 0, scale, 1.0)


def _lbfgs(problem, max_iter, theta0=None):
    """L-BFGS-B on the column-scaled problem, then the Newton polish.

    Variables are ``t = scale * w`` (``w = (a - b) / scale`` with ``a, b >= 0``
    when there is an L1 term, so that the problem is smooth with bounds).
    Dividing by the column scales makes every coordinate equally curved, which
    is what lets a quasi-Newton method get close on badly scaled features. A
    multinomial problem's ``K`` rows of coefficients are scaled alike, and not
    polished (its Hessian is ``K p`` square): L-BFGS-B runs until the objective
    stalls at ``ftol = 1e-15`` or the projected gradient is below ``1e-10``, and
    ``violation`` measures what it reached.
    """
    k, n_coords = problem.n_outputs, problem.n_coords
    p = k * problem.n_features  # the penalised coordinates, before the intercept(s)
    icpt = n_coords - p
    l1, l2, lo, hi = coordinate_penalties(problem.penalty, problem.n_features, k)
    scale = np.tile(_column_scales(problem.X), k)
    split = bool(np.any(l1 > 0))
    if split:
        lower = np.concatenate([np.maximum(lo, 0.0), np.maximum(-hi, 0.0)]) * np.tile(scale, 2)
        upper = np.concatenate([np.maximum(hi, 0.0), np.maximum(-lo, 0.0)]) * np.tile(scale, 2)
    else:
        lower, upper = lo * scale, hi * scale
    lower = np.append(lower, [-np.inf] * icpt)
    upper = np.append(upper, [np.inf] * icpt)
    bounds = [
        (None if np.isinf(a) else a, None if np.isinf(b) else b)
        for a, b in zip(lower, upper, strict=True)
    ]

    def unpack(x):
        theta = np.empty(n_coords)
        theta[:p] = ((x[:p] - x[p : 2 * p]) if split else x[:p]) / scale
        theta[p:] = x[len(x) - icpt :]
        return theta

    def fun(x):
        theta = unpack(x)
        z = problem.margins(theta)
        w = theta[:p]
        value = np.mean(problem.datafit.loss(z, problem.y)) + 0.5 * np.sum(l2 * w * w)
        grad_theta = problem.gradient(theta, problem.datafit.derivative(z, problem.y))
        grad_w = (grad_theta[:p] + l2 * w) / scale
        if split:
            value += np.sum(l1 * (x[:p] + x[p : 2 * p]) / scale)
            grad_w = np.concatenate([grad_w + l1 / scale, -grad_w + l1 / scale])
        return value, np.append(grad_w, grad_theta[p:])

    w0 = np.zeros(p) if theta0 is None else theta0[:p]
    x0 = (
        np.concatenate([np.maximum(w0, 0.0), np.maximum(-w0, 0.0)]) * np.tile(scale, 2)
        if split
        else w0 * scale
    )
    x0 = np.clip(np.append(x0, theta0[p:] if theta0 is not None else [0.0] * icpt), lower, upper)
    # moderate accuracy suffices: the Newton polish takes it to the arithmetic's limit
    options = {
        "maxiter": max_iter,
        "maxfun": 2 * max_iter,
        "ftol": 1e-15,
        "gtol": 0.0 if k == 1 else 1e-10,
        "maxcor": 30,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, options=options)
    return _polish(problem, unpack(res.x)) if k == 1 else unpack(res.x)


def _polish(problem, theta, max_rounds=30):
    """Active-set Newton refinement of an approximate solution.

    Coordinates at zero (under an L1 term) or at a bound are held fixed, the
    smooth problem in the others (with the signs of the L1 terms fixed) is
    solved by a trust-region Newton method, coordinates that cross zero or a
    bound are fixed there, and fixed coordinates that violate their optimality
    condition are released; repeated until none does. First-order methods stall
    near ``1e-8``; this reaches the accuracy of the arithmetic.
    """
    p = problem.n_features
    l1, l2, lo, hi = problem.penalty.prox_params(p)
    start = theta
    theta = theta.copy()
    w = theta[:p]
    sign = np.sign(w)
    fixed = ((l1 > 0) & (w == 0.0)) | (w <= lo) | (w >= hi)
    for _ in range(max_rounds):
        free = np.flatnonzero(~fixed)
        target = _newton_on(problem, theta, free, sign[free], l1[free], l2[free])
        step = target - theta
        # the largest fraction of the step that keeps signs and bounds
        wf, sf = theta[free], step[free]
        with np.errstate(divide="ignore", invalid="ignore"):
            to_zero = np.where((l1[free] > 0) & (sign[free] * sf < 0), -wf / sf, np.inf)
            to_lo = np.where(sf < 0, (lo[free] - wf) / sf, np.inf)
            to_hi = np.where(sf > 0, (hi[free] - wf) / sf, np.inf)
        limit = np.minimum(np.minimum(to_zero, to_lo), to_hi)
        t = min(1.0, float(np.min(limit, initial=np.inf)))
        theta = theta + t * step
        if t < 1.0:
            hit = free[limit <= t]
            theta[hit] = np.where(
                to_zero[limit <= t] <= t, 0.0, np.clip(theta[hit], lo[hit], hi[hit])
            )
            fixed[hit] = True
            continue
        grad = problem.gradient(theta)[:p] + l2 * theta[:p]
        at_zero = fixed & (l1 > 0) & (theta[:p] == 0.0)
        release = at_zero & (np.abs(grad) > l1 * (1 + 1e-12) + 1e-15)
        release |= fixed & (theta[:p] <= lo) & (grad < -1e-15)
        release |= fixed & (theta[:p] >= hi) & (grad > 1e-15)
        if not release.any():
            break
        sign[release & at_zero] = -np.sign(grad[release & at_zero])
        fixed &= ~release
    # at this accuracy objectives differ by rounding only: keep the polished point
    # unless it is measurably worse
    before = problem.objective(start)
    return theta if problem.objective(theta) <= before + 1e-13 * abs(before) else start


def _newton_on(problem, theta, free, sign, l1, l2, max_iter=50):
    """Minimise the smooth reduced problem over the coordinates ``free`` (and the intercept).

    Newton's method with the gradient norm as merit function: near the optimum
    the objective's decrease falls below its rounding, its gradient does not.
    """
    X, y, n, p = problem.X, problem.y, problem.n_samples, problem.n_features
    icpt = problem.fit_intercept
    datafit = problem.datafit
    XF = X[:, free]
    if icpt:
        XF = (
            sp.hstack([XF, np.ones((n, 1))], format="csc")
            if sp.issparse(XF)
            else np.column_stack([XF, np.ones(n)])
        )
    m = XF.shape[1]
    reg = np.append(l2, 0.0) if icpt else l2
    lin = np.append(l1 * sign, 0.0) if icpt else l1 * sign
    base = theta[:p].copy()
    base[free] = 0.0
    offset = np.asarray(X @ base).ravel()

    def gradient(x):
        s = datafit.derivative(offset + np.asarray(XF @ x).ravel(), y)
        return np.asarray(XF.T @ s).ravel() / n + lin + reg * x

    def newton_direction(x, g):
        d = datafit.second_derivative(offset + np.asarray(XF @ x).ravel(), y)
        if m <= 2000:
            if sp.issparse(XF):
                H = (XF.T @ XF.multiply(d[:, None]).tocsc()).toarray() / n
            else:
                H = XF.T @ (XF * d[:, None]) / n
            H[np.diag_indices(m)] += reg
            return np.linalg.lstsq(H, -g, rcond=None)[0]
        op = LinearOperator(
            (m, m), matvec=lambda v: np.asarray(XF.T @ (d * (XF @ v))).ravel() / n + reg * v
        )
        return cg(op, -g, rtol=1e-14, maxiter=10 * m)[0]

    x = np.append(theta[free], theta[-1]) if icpt else theta[free].copy()
    g = gradient(x)
    for _ in range(max_iter):
        norm = np.linalg.norm(g)
        if norm == 0.0:
            break
        d = newton_direction(x, g)
        t = 1.0
        while t > 1e-6:
            g_new = gradient(x + t * d)
            if np.linalg.norm(g_new) < norm:
                break
            t *= 0.5
        else:
            break
        x, g = x + t * d, g_new
    out = theta.copy()
    out[free] = x[: free.size]
    if icpt:
        out[-1] = x[-1]
    return out


# -- the L1 ball: the penalised path at the right strength -------------------------------


def _l1_ball(problem, max_iter):
    """The ball's optimum is the L1-penalised optimum at the ``lam`` where ``||w||_1 = radius``.

    ``||w(lam)||_1`` does not increase with ``lam``; bracket the root on a log
    scale, find it with Brent's method on exact penalised solves, and project
    the last rounding error away.
    """
    radius = problem.penalty.radius
    p = problem.n_features
    penalised = copy.copy(problem)
    last = None  # warm start: Brent's iterates approach the root

    def solve(lam):
        nonlocal last
        penalised.penalty = L1(lam)
        last = _lbfgs(penalised, max_iter, last)
        return last

    def excess(log_lam):
        return np.abs(solve(np.exp(log_lam))[:p]).sum() - radius

    lam = max(float(np.max(np.abs(problem.gradient(np.zeros(problem.n_coords))[:p]))), 1e-300)
    hi = np.log(lam)
    while excess(hi) > 0:
        hi += np.log(4.0)
    lo = hi - np.log(4.0)
    floor = hi - 30 * np.log(10.0)
    while excess(lo) < 0:
        if lo < floor:  # the constraint does not bind: the unconstrained optimum is inside
            theta = solve(np.exp(lo))
            break
        lo -= np.log(4.0)
    else:
        root = brentq(excess, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps, maxiter=200)
        theta = solve(np.exp(root))
    theta[:p] = problem.penalty.prox(theta[:p])
    return theta


# -- the hinge loss ------------------------------------------------------------------------


def _hinge_lp(problem):
    """``min (1/n) sum xi + l1 sum(a + b)`` with ``xi_i >= 1 - y_i (x_i (a - b) + c)``.

    Returns ``(theta, u)`` with ``u`` the dual point read off the LP multipliers.
    """
    X, y = sp.csr_matrix(problem.rows), problem.y
    n, p = X.shape
    penalty = problem.penalty
    if isinstance(penalty, L1Ball):
        l1 = 0.0
        lo, hi = np.full(p, -np.inf), np.full(p, np.inf)
    else:
        l1_arr, _, lo, hi = penalty.prox_params(p)
        l1 = float(l1_arr[0]) if p else 0.0
    icpt = int(problem.fit_intercept)
    yX = sp.diags(y) @ X
    blocks = [-yX, yX] + ([-(sp.csr_matrix(y[:, None]))] if icpt else []) + [-sp.eye(n)]
    A_ub = sp.hstack(blocks, format="csr")
    b_ub = -np.ones(n)
    cost = np.concatenate([np.full(2 * p, l1), np.zeros(icpt), np.full(n, 1.0 / n)])
    if isinstance(penalty, L1Ball):
        row = sp.hstack(
            [sp.csr_matrix(np.ones((1, 2 * p))), sp.csr_matrix((1, icpt + n))], format="csr"
        )
        A_ub = sp.vstack([A_ub, row], format="csr")
        b_ub = np.append(b_ub, penalty.radius)
    bounds = (
        [(max(a, 0.0), max(b, 0.0)) for a, b in zip(lo, hi, strict=True)]
        + [(max(-b, 0.0), max(-a, 0.0)) for a, b in zip(lo, hi, strict=True)]
        + [(None, None)] * icpt
        + [(0.0, None)] * n
    )
    bounds = [(a, None if b is not None and np.isinf(b) else b) for a, b in bounds]
    options = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs-ds", options=options)
    if res.status != 0:
        raise RuntimeError(f"the reference LP did not solve: {res.message}")
    x = res.x
    theta = x[:p] - x[p : 2 * p]
    if icpt:
        theta = np.append(theta, x[2 * p])
    # the multipliers of the hinge rows, scaled by n, are the SVM dual variables in [0, 1]
    gamma = np.clip(-n * res.ineqlin.marginals[:n], 0.0, 1.0)
    return theta, -y * gamma


def _hinge_l2(problem, max_iter, check_every=20):
    """SVM by dual coordinate descent; returns ``(theta, u)`` with ``u`` the dual point.

    The unpenalised intercept is the multiplier of ``sum_i y_i gamma_i = 0``,
    enforced by an augmented Lagrangian updated after every block of passes.
    Stops when the duality gap certifies relative accuracy well below
    ``TARGET_RTOL``.
    """
    X = sp.csr_matrix(problem.rows)
    y, n, p = problem.y, problem.n_samples, problem.n_features
    alpha_n = _strengths(problem.penalty)[1] * n
    sq_norms = np.asarray(X.multiply(X).sum(axis=1)).ravel()
    icpt = problem.fit_intercept
    rho = float(np.mean(sq_norms)) / alpha_n if icpt else 0.0
    gamma, w = np.zeros(n), np.zeros(p)
    intercept, balance = 0.0, 0.0
    rng = np.random.default_rng(0)
    theta = np.zeros(problem.n_coords)
    for _ in range(max(1, max_iter // check_every)):
        balance = svm_dual_epochs_csr(
            X.data,
            X.indices,
            X.indptr,
            y,
            sq_norms,
            gamma,
            w,
            rng.permutation(n),
            alpha_n,
            intercept,
            rho,
            balance,
            check_every,
        )
        # undo the drift of the incremental updates before measuring
        w = np.asarray(X.T @ (y * gamma)).ravel() / alpha_n
        balance = float(y @ gamma)
        if icpt:
            intercept += rho * balance
        theta = np.append(w, intercept) if icpt else w
        if duality_gap(problem, theta, -y * gamma) <= 1e-3 * TARGET_RTOL * problem.objective(
            theta
        ):
            break
    return theta, -y * gamma
