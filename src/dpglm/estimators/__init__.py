"""scikit-learn estimators trained under differential privacy.

Six estimators share one implementation: :class:`DPLinearRegression`,
:class:`DPRidge`, :class:`DPLasso`, :class:`DPElasticNet` (regressors) and
:class:`DPLogisticRegression`, :class:`DPLinearSVC` (classifiers, of two classes
or more). Each minimises ``(1/n) sum_i loss(x_i . w + b, y_i) + alpha *
penalty(w)`` with a private solver and keeps the
:class:`~dpglm.privacy.report.PrivacyReport` of the fit in ``privacy_report_``.

More than two classes
---------------------
A classifier whose label set holds ``K > 2`` labels (its public ``classes``,
or the labels of ``y`` its private label selection keeps, see
:mod:`~dpglm.estimators.labels`) fits them one of two ways, chosen from the
solver and ``K`` (:mod:`~dpglm.estimators.multiclass`):

* **multinomial**: :class:`DPLogisticRegression` with DP-SGD (what
  ``solver="auto"`` picks for ``K > 2``) or DP-AGD fits the softmax loss's
  ``K x (p + 1)`` coefficients at once, each record's gradient clipped over
  all ``K`` rows together: the plan, and so the noise, is the binary fit's,
  whatever ``K``. DP-SGD's default step is then matched to its noise
  (:func:`~dpglm.solvers.dp_sgd.noise_matched_step`).
* **one-vs-rest**: DP-CD, DP-GCD and DP-SCD fit one margin per record, and
  :class:`DPLinearSVC` has no multinomial loss: ``K`` binary fits (each
  class against the rest), their plans put in a row, each its own part of
  the report (``"class <label>"``), and calibrated together to the one
  ``(epsilon, delta)`` by the accountant. Each fit's noise is that of a
  ``K``-fold composition, about ``sqrt(K)`` times the binary fit's.

``coef_`` is then ``(K, n_features)``, ``intercept_`` ``(K,)``,
``decision_function`` one column per class, ``multi_class_`` says which way
the classes were fitted, and ``planned_fit(..., n_classes=K)`` gives the plan
before the data is read.

Privacy parameters
------------------
``epsilon`` (default 1.0) and ``delta`` (default ``None``: ``min(1 / n**2, 1e-5)``,
computed from the number of records ``n``, which is public: every fit is
analysed for replace-one neighbours; pass a number to fix it before seeing the
data). ``budget``, a shared :class:`~dpglm.privacy.budget.PrivacyBudget`,
is charged by every fit (``clone``, grid searches and pickling keep the same
budget). ``epsilon=inf`` gives the non-private optimum (certified reference
solver), and the report says the fit is not private.

Solvers
-------
``solver="auto"`` picks, before looking at the data beyond its shape:

* ``"dp-direction"`` for a binary logistic or squared hinge fit of sparse
  features with ``p >= n``, an intercept and no L1 part (text, one-hot codes):
  one private gradient at the intercept-only model and a private line fit
  along it (:mod:`dpglm.solvers.dp_direction`), where the iterative solvers
  end at the majority class (sms spam at epsilon 1: 0.906 for
  ``DPLogisticRegression``, 5 seeds, and 0.911 for ``DPLinearSVC``, 3 seeds,
  against 0.873; ``benchmarks/bench_defaults.py``, ``bench_sparse_text.py``),
  unless a ``step`` or ``passes`` is set, which it has not (as a search over
  them sets them);
* ``"dp-gcd"`` when the loss is smooth and the penalty has an L1 part or
  ``p >= n / 10`` (greedy steps find the few coordinates that matter, and each
  costs one selection; the ratio is that of the DP-GCD paper's experiments,
  see :func:`~dpglm.solvers.registry.choose_solver`);
* ``"dp-sgd"`` otherwise, the hinge loss included (not smooth: no
  coordinate-wise steps).

``benchmarks/bench_estimators.py`` measures the rule: with default
hyperparameters DP-SGD (Poisson sampling, amplified) is the most robust on
problems with ``p < n``, while DP-CD needs its step and clipping tuned to
the data's scale to catch up. ``solver="dp-cd"`` remains available.

``solver="dp-scd"`` (private dual coordinate descent, Damaskinos et al. 2021)
fits L2-penalised problems; its hyperparameters are ``batch_size`` and ``clip``
(no ``step``). It fits the model on rows normalised to unit L2 norm, and
``predict`` normalises rows too. An intercept is fitted as liblinear does, as
the weight of a constant feature ``s`` appended to every row before the
normalisation (``solver_options={"intercept_scaling": s}``, default 1): the
intercept is then penalised like the coefficients, and the model applies to
the rows ``(x, s) / ||(x, s)||``.

``solver="dp-agd"`` (gradient descent with an adaptive per-step zCDP budget, Lee
and Kifer 2018) fits smooth losses with no penalty or an L2 penalty; ``clip``
bounds each per-sample gradient in L2, it chooses its own step sizes (no
``step``), and runs until its budget is spent (``passes``, if given, caps the
number of gradient steps).

``solver="dp-direction"`` fits the logistic and the squared hinge losses with
no penalty or an L2 penalty, which it does not apply (its model, a multiple of the released
direction, has two free parameters); ``clip`` bounds each row's L2 norm in the
class sums, and the estimator tells it which columns its ranges keep
non-negative (their sums move by ``sqrt(2) C``, not ``2 C``).

``solver="adassp"`` (sufficient-statistics perturbation with an adaptive
ridge, Wang 2018) fits least squares and ridge in one pass and closed form;
it takes no ``clip``, ``step`` or ``passes`` (the records are bounded by the
scaling below).

Private preprocessing
---------------------
Every fit clips each record to a range per feature (and a regressor's target
to its range) and maps them into ``[-1, 1]`` before the solver reads them
(:mod:`dpglm.estimators.preprocessing`); ``coef_`` and ``intercept_`` are on
the raw scale, ``predict`` takes raw records, and ``scaling_`` holds the
ranges. Without public ``feature_bounds`` / ``target_bounds`` the ranges are
released privately with a share of the budget (the report's part
``"preprocessing"``); with them, nothing is spent. The coordinate solvers'
smoothness constants then come from the bound 1 of the scaled records: by
default (``smoothness="auto"``) estimated privately at 10 % of the rest
(the report's part ``"smoothness estimation"``); ``smoothness="bounds"`` uses
the bound alone; ``smoothness="data"`` reads them from the data, with a
:class:`~dpglm.exceptions.PrivacyLeakWarning` that the report records. No
default path reads anything from the data without privacy.

Modules
-------
:mod:`~dpglm.estimators.regressors` and :mod:`~dpglm.estimators.classifiers`
hold the six classes; :mod:`~dpglm.estimators.base` their shared fit and
prediction; :mod:`~dpglm.estimators.multiclass` one-vs-rest's plan and report;
:mod:`~dpglm.estimators.validation` the checks of data, feature names and
hyperparameters; :mod:`~dpglm.estimators.dispatch` the solver choice and calls;
:mod:`~dpglm.estimators.persistence` the model files. Every
public name is imported here.

Examples
--------
>>> import numpy as np
>>> from dpglm.estimators import DPLogisticRegression
>>> rng = np.random.default_rng(0)
>>> X = rng.uniform(-1, 1, (2000, 3))
>>> y = (X[:, 0] - X[:, 1] > 0).astype(int)
>>> model = DPLogisticRegression(epsilon=1.0, feature_bounds=1.0, random_state=0).fit(X, y)
>>> model.score(X, y) > 0.9, model.solver_, round(model.privacy_report_.epsilon, 2)
(True, 'dp-sgd', 1.0)
"""

from dpglm.estimators.classifiers import DPLinearSVC, DPLogisticRegression
from dpglm.estimators.dispatch import choose_solver, default_batch_size, default_delta
from dpglm.estimators.persistence import MODEL_FORMAT, MODEL_FORMAT_VERSION, load_model
from dpglm.estimators.pipeline_files import save_pipeline
from dpglm.estimators.regressors import DPElasticNet, DPLasso, DPLinearRegression, DPRidge

ESTIMATORS = {
    cls.__name__: cls
    for cls in (
        DPLinearRegression,
        DPRidge,
        DPLasso,
        DPElasticNet,
        DPLogisticRegression,
        DPLinearSVC,
    )
}


def __getattr__(name):
    # the solver names and default work come from the registry, read on first use
    if name in ("SOLVERS", "DEFAULT_PASSES"):
        from dpglm.estimators import dispatch

        return getattr(dispatch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_PASSES",
    "ESTIMATORS",
    "MODEL_FORMAT",
    "MODEL_FORMAT_VERSION",
    "SOLVERS",
    "DPElasticNet",
    "DPLasso",
    "DPLinearRegression",
    "DPLinearSVC",
    "DPLogisticRegression",
    "DPRidge",
    "choose_solver",
    "default_batch_size",
    "default_delta",
    "load_model",
    "save_pipeline",
]
