"""The command line's ``--model`` names and the estimators they make.

:data:`MODELS` maps each name to its estimator class and task;
:func:`make_estimator` builds the estimator ``dpglm fit`` fits (and whose
problem ``dpglm compare`` solves) from the parsed options, and
:func:`describe_model` names it in the output.
"""

from __future__ import annotations

#: command-line model name: (estimator class, task)
MODELS = {
    "linear": ("DPLinearRegression", "regression"),
    "ridge": ("DPRidge", "regression"),
    "lasso": ("DPLasso", "regression"),
    "elasticnet": ("DPElasticNet", "regression"),
    "logistic": ("DPLogisticRegression", "classification"),
    "svm": ("DPLinearSVC", "classification"),
}
#: the ``--penalty`` choices of the classifiers
PENALTIES = ("l2", "l1", "elasticnet", "none")


def model_task(model: str) -> str:
    """The task of a command-line model name: ``"regression"`` or ``"classification"``.

    Examples
    --------
    >>> model_task("lasso"), model_task("svm")
    ('regression', 'classification')
    """
    return MODELS[model][1]


def check_feature_bounds(bounds, n_features: int, data: str):
    """``--feature-bounds`` when it fits the data: one bound, or one per feature.

    Parameters
    ----------
    bounds : float, list of float or None
        The parsed option.
    n_features : int
        The number of features of the data.
    data : str
        How messages name the data file.

    Returns
    -------
    float, list of float or None
        ``bounds``, unchanged.

    Raises
    ------
    ValueError
        ``bounds`` is a list whose length is not ``n_features``.

    Examples
    --------
    >>> check_feature_bounds([1.0, 2.0], 3, "'d.csv'")
    Traceback (most recent call last):
    ...
    ValueError: --feature-bounds has 2 values; 'd.csv' has 3 features (give one bound for all, or one per feature)
    """  # noqa: E501
    if isinstance(bounds, list) and len(bounds) != n_features:
        raise ValueError(
            f"--feature-bounds has {len(bounds)} values; {data} has {n_features} features "
            "(give one bound for all, or one per feature)"
        )
    return bounds


def make_estimator(args, *, budget=None, feature_bounds=None):
    """The estimator of ``--model`` with the hyperparameters of the parsed options.

    Parameters
    ----------
    args : argparse.Namespace
        The arguments of ``dpglm fit`` or ``dpglm compare`` (``compare`` has
        no ``--epsilon`` or ``--solver``: the estimator's defaults are used).
    budget : dpglm.privacy.budget.PrivacyBudget, optional
        The budget the fit is charged to.
    feature_bounds : float or list of float, optional
        Public bounds on ``|X_ij|`` (one for all features, or one per feature,
        as :func:`check_feature_bounds` matched them to the number of
        features). They are an assumption of the guarantee, taken as given:
        comparing them with the data's values would read the data without
        privacy.

    Returns
    -------
    estimator
        An unfitted :mod:`dpglm.estimators` estimator.

    Examples
    --------
    >>> from dpglm.cli.parser import build_parser
    >>> args = build_parser().parse_args(["fit", "d.csv", "-o", "m.json", "--model", "lasso"])
    >>> describe_model(make_estimator(args))
    'DPLasso(alpha=0.001)'
    """
    from dpglm import estimators

    cls = getattr(estimators, MODELS[args.model][0])
    params = {
        "epsilon": getattr(args, "epsilon", 1.0),
        "delta": args.delta,
        "budget": budget,
        "solver": getattr(args, "solver", "auto"),
        "clip": args.clip,
        "passes": args.passes,
        "step": args.step,
        "batch_size": args.batch_size,
        "feature_bounds": feature_bounds,
        "random_state": args.seed,
    }
    if getattr(args, "categories", None) is not None:
        params["categories"] = read_categories(args.categories)
    if getattr(args, "missing_values", None):
        params["missing_values"] = missing_markers(args.missing_values)
    target_bounds = getattr(args, "target_bounds", None)
    if args.model not in ("logistic", "svm"):
        params["target_bounds"] = target_bounds
    elif target_bounds is not None:
        raise ValueError(
            f"--target-bounds is the range of a regression's target; --model {args.model} "
            "is a classifier (its labels need no range)"
        )
    if args.model in ("logistic", "svm"):
        params["penalty"] = args.penalty or "l2"
        params["classes"] = getattr(args, "classes", None)
    if args.alpha is not None:
        params["alpha"] = args.alpha
    if args.l1_ratio is not None:
        params["l1_ratio"] = args.l1_ratio
    return cls(**params)


def read_categories(path) -> dict:
    """The public category sets of ``--categories``: a JSON object, column -> list of values.

    Parameters
    ----------
    path : str or os.PathLike
        The JSON file.

    Returns
    -------
    dict
        Column name -> list of its public values (strings, numbers or null),
        as the estimators' ``categories`` takes them.

    Raises
    ------
    FileNotFoundError, OSError
        The file cannot be read; the message names it.
    ValueError
        It is not JSON, or not an object whose values are non-empty lists of
        distinct strings, numbers or nulls; the message names the file and
        the column.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "categories.json")
    >>> _ = open(path, "w").write('{"sex": ["Female", "Male"]}')
    >>> read_categories(path)
    {'sex': ['Female', 'Male']}
    >>> _ = open(path, "w").write('{"sex": "Female"}')
    >>> read_categories(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --categories '...categories.json': column 'sex' has "Female", not a list of values; expected a JSON object of column name -> list of public values, e.g. {"sex": ["Female", "Male"]}
    """  # noqa: E501
    import json

    shown = f"--categories {str(path)!r}"
    example = 'e.g. {"sex": ["Female", "Male"]}'
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"{shown}: no such file") from None
    except OSError as err:
        raise OSError(f"{shown}: cannot read it ({err.strerror or err})") from None
    except UnicodeDecodeError as err:
        raise ValueError(f"{shown} is not UTF-8 text ({err.reason})") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{shown} is not valid JSON ({err.msg} at line {err.lineno}, column {err.colno}); "
            f"expected an object of column name -> list of public values, {example}"
        ) from None
    if not isinstance(document, dict):
        raise ValueError(
            f"{shown} holds a JSON {type(document).__name__}, not an object; expected an object "
            f"of column name -> list of public values, {example}"
        )
    for name, values in document.items():
        what = None
        if not isinstance(values, list):
            what = f"{json.dumps(values)}, not a list of values"
        elif not values:
            what = "an empty list (leave the column out to select its values privately)"
        elif any(isinstance(v, dict | list | bool) for v in values):
            what = "a list holding something other than strings, numbers or null"
        elif len({json.dumps(v) for v in values}) < len(values):
            what = "a value listed twice"
        if what is not None:
            raise ValueError(
                f"{shown}: column {name!r} has {what}; expected a JSON object of column name "
                f"-> list of public values, {example}"
            )
    return document


def missing_markers(values) -> list:
    """The markers of every ``--missing-values`` option, in order, each once.

    Examples
    --------
    >>> missing_markers([["?"], ["NA", "?"]])
    ['?', 'NA']
    """
    return list(dict.fromkeys(marker for markers in values for marker in markers))


def describe_model(estimator) -> str:
    """The estimator's class and penalty hyperparameters, as the output names a model.

    Examples
    --------
    >>> from dpglm.estimators import DPElasticNet, DPLogisticRegression, DPRidge
    >>> describe_model(DPRidge(alpha=0.1))
    'DPRidge(alpha=0.1)'
    >>> describe_model(DPLogisticRegression(penalty="elasticnet", alpha=0.01, l1_ratio=0.3))
    "DPLogisticRegression(penalty='elasticnet', alpha=0.01, l1_ratio=0.3)"
    >>> describe_model(DPElasticNet(alpha=0.1, l1_ratio=0.2))
    'DPElasticNet(alpha=0.1, l1_ratio=0.2)'
    """
    params = estimator.get_params()
    parts = []
    for name in ("penalty", "alpha", "l1_ratio"):
        if name in params and (
            name != "l1_ratio"
            or "elastic" in type(estimator).__name__.lower()
            or params.get("penalty") == "elasticnet"
        ):
            parts.append(f"{name}={params[name]!r}")
    return f"{type(estimator).__name__}({', '.join(parts)})"
