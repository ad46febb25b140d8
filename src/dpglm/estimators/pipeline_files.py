"""Fitted scikit-learn pipelines of dpglm steps saved as JSON and loaded back.

A pipeline of dpglm's private range transformers (:class:`PrivateClipper`,
:class:`PrivateMinMaxScaler`, :class:`PrivateStandardScaler`, and
``"passthrough"``) ending in a dpglm estimator is saved by
:func:`save_pipeline` and read back by :func:`~dpglm.estimators.load_model`.
The file (``"format": "dpglm-pipeline"``, ``"version": 1``) holds ``steps``,
one object per step in order: its ``name`` and either ``"passthrough": true``,
a ``model`` (the estimator's own document, :func:`save_model`'s), or a
``transformer``: its class name, ``params`` (``random_state`` as null, as a
model's), ``budget`` (as a model's) and ``fitted``, each fitted attribute
(``low_``, ``high_``, ``mean_``, ``privacy_report_``, ...) as JSON. Any other
step (a scikit-learn transformer, whose state may be a function, or a
private one-hot encoder) is refused, naming it: no pickle is involved.

Examples
--------
>>> import numpy as np, tempfile, os, warnings
>>> from sklearn.pipeline import make_pipeline
>>> from dpglm import PrivacyBudget
>>> from dpglm.estimators import DPRidge, load_model
>>> from dpglm.preprocessing import PrivateStandardScaler
>>> X = np.random.default_rng(0).normal(3.0, 2.0, (2000, 2))
>>> budget = PrivacyBudget(epsilon=2.0, delta=1e-6)
>>> pipe = make_pipeline(
...     PrivateStandardScaler(budget=budget, random_state=0),
...     DPRidge(budget=budget, delta=5e-7, random_state=0),
... )
>>> pipe = pipe.fit(X, X[:, 0])
>>> path = os.path.join(tempfile.mkdtemp(), "pipeline.json")
>>> _ = save_pipeline(pipe, path)
>>> with warnings.catch_warnings(record=True) as said:  # the in-memory budget is not saved
...     again = load_model(path)
>>> len(said), again[0].budget is None
(1, True)
>>> bool(np.array_equal(again.predict(X), pipe.predict(X)))
True
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from dpglm.estimators.persistence import (
    PIPELINE_FORMAT,
    budget_reference,
    from_json_numbers,
    jsonable,
    model_document,
    model_from_document,
    params_document,
    reopen_budget,
)
from dpglm.exceptions import UnreadableFileError
from dpglm.privacy.report import PrivacyReport

__all__ = ["PIPELINE_FORMAT_VERSION", "pipeline_from_document", "save_pipeline"]

PIPELINE_FORMAT_VERSION = 1
#: the fitted attributes of the range transformers that hold integers, not floats
_COUNTS = ("n_features_in_", "n_samples_seen_")
#: the fitted attributes a saved transformer may hold: every range transformer's, and the
#: standard scaler's moments (one value per column unless said)
_FITTED = ("n_features_in_", "feature_names_in_", "low_", "high_", "delta_", "privacy_report_")
_MOMENTS = ("mean_", "var_", "scale_", "output_bounds_", "n_samples_seen_")
_PER_COLUMN = ("feature_names_in_", "low_", "high_", "mean_", "var_", "scale_")


def _fitted_names(cls) -> tuple:
    """The fitted attributes a saved ``cls`` holds, written and read back alike."""
    return (*_FITTED, *(_MOMENTS if cls.__name__ == "PrivateStandardScaler" else ()))


def _transformers() -> dict:
    from dpglm.preprocessing import PrivateClipper, PrivateMinMaxScaler, PrivateStandardScaler

    return {c.__name__: c for c in (PrivateClipper, PrivateMinMaxScaler, PrivateStandardScaler)}


def save_pipeline(pipeline, path) -> Path:
    """Write the fitted ``pipeline`` to ``path`` as JSON; :func:`~dpglm.estimators.load_model`
    reads it back.

    Parameters
    ----------
    pipeline : sklearn.pipeline.Pipeline
        Fitted; its steps dpglm's range transformers or ``"passthrough"``,
        its last a dpglm estimator (see the module docstring).
    path : str or path-like

    Returns
    -------
    pathlib.Path

    Raises
    ------
    TypeError
        ``pipeline`` is not a ``Pipeline``, or a step is not one that can be
        saved (the message names it).
    sklearn.exceptions.NotFittedError
        A step is not fitted.
    """
    if not isinstance(pipeline, Pipeline):
        raise TypeError(f"save_pipeline takes a sklearn Pipeline, got {type(pipeline).__name__}")
    from dpglm.estimators import ESTIMATORS

    *front, (last_name, last) = pipeline.steps
    if ESTIMATORS.get(type(last).__name__) is not type(last):
        raise TypeError(
            f"the pipeline's last step {last_name!r} is a {type(last).__name__}; a saved "
            f"pipeline ends in a dpglm estimator ({', '.join(sorted(ESTIMATORS))})"
        )
    steps = [_step_document(name, step) for name, step in front]
    steps.append({"name": last_name, "model": model_document(last)})
    document = {"format": PIPELINE_FORMAT, "version": PIPELINE_FORMAT_VERSION, "steps": steps}
    path = Path(path)
    path.write_text(json.dumps(document, indent=1, allow_nan=False) + "\n")
    return path


def _step_document(name, step) -> dict:
    if step is None or (isinstance(step, str) and step == "passthrough"):
        return {"name": name, "passthrough": True}
    known = _transformers()
    if type(step).__name__ not in known or type(step) is not known[type(step).__name__]:
        raise TypeError(
            f"pipeline step {name!r} ({type(step).__name__}) cannot be saved as JSON: a saved "
            f"pipeline's steps before the last are {', '.join(sorted(known))} or "
            "'passthrough'"
        )
    check_is_fitted(step, "low_")
    params = step.get_params(deep=False)
    budget = params.pop("budget", None)
    fitted = {}
    for attribute in _fitted_names(type(step)):
        if not hasattr(step, attribute):
            continue  # feature names only when fitted with them
        value = getattr(step, attribute)
        if isinstance(value, PrivacyReport):
            value = {"report": value.to_dict()}
        elif attribute == "feature_names_in_":
            value = [str(v) for v in value]
        else:
            value = jsonable(value)
        fitted[attribute] = value
    return {
        "name": name,
        "transformer": type(step).__name__,
        "params": params_document(params),
        "budget": budget_reference(budget),
        "fitted": fitted,
    }


def pipeline_from_document(document: dict, where: str) -> Pipeline:
    """The fitted pipeline a document of :func:`save_pipeline` describes; ``where`` names its
    file in messages.

    Raises
    ------
    UnreadableFileError
        Another format version, or a step that is malformed (the message names it).
    """
    version = document.get("version")
    if type(version) is not int or version != PIPELINE_FORMAT_VERSION:
        raise UnreadableFileError(
            f"{where} has pipeline format version {version!r}; this dpglm reads version "
            f"{PIPELINE_FORMAT_VERSION}"
        )
    steps = document.get("steps")
    if not isinstance(steps, list) or not steps:
        raise UnreadableFileError(f"{where} is not a valid dpglm pipeline file: no steps")
    budgets: dict = {}

    def reopen(reference, place):
        # steps that shared a budget share the one reopened (and warn once if it is lost)
        key = json.dumps(reference, sort_keys=True)
        if key not in budgets:
            budgets[key] = reopen_budget(reference, place)
        return budgets[key]

    built = []
    for k, step in enumerate(steps):
        name = step.get("name") if isinstance(step, dict) else None
        if not isinstance(name, str):
            raise UnreadableFileError(f"{where}: step {k} has no name")
        last = k == len(steps) - 1
        if last:
            if not isinstance(step.get("model"), dict):
                raise UnreadableFileError(f"{where}: the last step {name!r} is not a model")
            model = model_from_document(step["model"], f"{where} step {name!r}", reopen)
            built.append((name, model))
            continue
        if step.get("passthrough") is True:
            built.append((name, "passthrough"))
            continue
        try:
            built.append((name, _transformer(step, reopen, f"{where} step {name!r}")))
        except (AttributeError, KeyError, TypeError, ValueError) as err:
            detail = f"missing field {err}" if isinstance(err, KeyError) else str(err)
            raise UnreadableFileError(
                f"{where} is not a valid dpglm pipeline file: step {name!r}: {detail}"
            ) from err
    return Pipeline(built)


def _transformer(step: dict, reopen, where: str):
    known = _transformers()
    cls = known.get(step["transformer"])
    if cls is None:
        raise ValueError(f"unknown transformer {step['transformer']!r}; known: {sorted(known)}")
    params = from_json_numbers(step["params"])
    if not isinstance(params, dict):
        raise TypeError(f"params must be an object, got {type(params).__name__}")
    params.pop("budget", None)
    transformer = cls(**params)
    fitted = step["fitted"]
    unknown = sorted(set(fitted) - set(_fitted_names(cls)))
    if unknown:
        raise ValueError(f"unknown fitted attributes {unknown} of a {cls.__name__}")
    for attribute, value in fitted.items():
        if isinstance(value, dict) and "report" in value:
            value = PrivacyReport.from_dict(value["report"])
        elif attribute == "feature_names_in_":
            value = np.asarray(value, dtype=object)
        elif attribute in _COUNTS:
            value = int(value)
        elif isinstance(value, list):
            value = np.asarray(from_json_numbers(value), dtype=float)
        elif value is not None:
            value = float(from_json_numbers(value))
        setattr(transformer, attribute, value)
    p = transformer.n_features_in_
    for attribute in _PER_COLUMN:
        if attribute in fitted and np.shape(getattr(transformer, attribute)) != (p,):
            raise ValueError(f"{attribute} must hold {p} values (n_features_in_)")
    for attribute in ("low_", "high_"):
        if attribute not in fitted:
            raise KeyError(attribute)
    transformer.budget = reopen(step.get("budget"), where)
    return transformer
