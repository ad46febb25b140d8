"""Fitted estimators saved as JSON and loaded back; no pickle is involved.

:func:`save_model` writes the file (every estimator's ``save`` calls it),
:func:`load_model` reads it; :func:`load_model` describes the format.
"""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dpglm.data.labels import ClassLabels
from dpglm.exceptions import UnreadableFileError
from dpglm.preprocessing.scaling import Scaling
from dpglm.privacy.report import PrivacyReport

MODEL_FORMAT = "dpglm-model"
MODEL_FORMAT_VERSION = 4
#: the tag of a saved pipeline (:mod:`dpglm.estimators.pipeline_files`)
PIPELINE_FORMAT = "dpglm-pipeline"
#: the versions this dpglm reads: 3 is 4 without ``encoding`` (no string columns), 2 is 3
#: without ``multi_class`` (two classes at most)
READABLE_VERSIONS = (2, 3, 4)


def save_model(model, path) -> Path:
    """Write the fitted ``model`` to ``path`` as JSON: the work of its ``save`` method.

    Parameters
    ----------
    model : dpglm estimator
        Fitted.
    path : str or path-like

    Returns
    -------
    pathlib.Path
    """
    path = Path(path)
    path.write_text(json.dumps(model_document(model), indent=1, allow_nan=False) + "\n")
    return path


def model_document(model) -> dict:
    """The JSON document :func:`save_model` writes for the fitted ``model``."""
    check_is_fitted(model, "coef_")
    coef, intercept = model._model()  # one model as the fit made it: (p,) and a number
    params = model.get_params(deep=False)
    budget = params.pop("budget", None)
    document = {
        "format": MODEL_FORMAT,
        "version": MODEL_FORMAT_VERSION,
        "estimator": type(model).__name__,
        "params": params_document(params),
        "budget": budget_reference(budget),
        # as in every version of the format
        "coef": coef.tolist(),
        "intercept": np.asarray(intercept, dtype=float).tolist(),
        "scaling": model.scaling_.to_dict(),
        "n_features_in": model.n_features_in_,
        "feature_names_in": (
            None
            if getattr(model, "feature_names_in_", None) is None
            else [str(v) for v in model.feature_names_in_]
        ),
        "classes": (
            None if model._task != "classification" else jsonable(model.classes_.tolist())
        ),
        "multi_class": getattr(model, "multi_class_", None),
        "solver": model.solver_,
        "n_iter": model.n_iter_,
        "delta": model.delta_,
        "privacy_report": model.privacy_report_.to_dict(),
        "encoding": (
            None if getattr(model, "encoding_", None) is None else model.encoding_.to_dict()
        ),
    }
    return document


def load_model(path):
    """Rebuild a fitted estimator from the JSON written by its ``save`` method.

    A file written by :func:`~dpglm.estimators.save_pipeline` gives its
    scikit-learn ``Pipeline`` back (:mod:`dpglm.estimators.pipeline_files`).

    The format (``"format": "dpglm-model"``, ``"version": 4``; versions 3
    and 2, without string columns, and 2 of two classes at most, are read
    too) holds
    ``estimator`` (class name), ``params`` (hyperparameters; infinite values as
    the strings ``"inf"``), ``budget`` (``null``; ``{"ledger": null}`` for an
    in-memory budget, which is not restored; or the absolute ledger path and
    the dataset of a persistent budget, reopened), ``coef``, ``intercept``
    (on the raw scale), ``scaling`` (the ranges the records are clipped to and
    how they were mapped, :class:`~dpglm.preprocessing.scaling.Scaling`),
    ``n_features_in``, ``feature_names_in``, ``classes``, ``multi_class``
    (``"binary"``, ``"multinomial"`` or ``"ovr"``; ``coef`` is then one row
    per class and ``intercept`` one per class; ``null`` for a regressor),
    ``solver``, ``n_iter``, ``delta``, ``privacy_report``
    (:meth:`PrivacyReport.to_dict`) and ``encoding`` (``null``, or for a
    model fitted on a table with string columns its columns and public
    category sets, :meth:`~dpglm.estimators.tables.TableEncoding.to_dict`;
    ``coef`` then has one entry per encoded column). No pickle is involved.

    Raises
    ------
    UnreadableFileError
        The file is missing, not JSON, not a dpglm model, of another format
        version, names an unknown estimator or lacks a field.

    Warns
    -----
    UserWarning
        The model was fitted with a budget that cannot be restored (an
        in-memory one, or a ledger file that no longer exists): the loaded
        model has ``budget=None``, so refitting it is not charged.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> from dpglm.estimators import DPRidge
    >>> X = np.random.default_rng(0).uniform(-1, 1, (500, 2))
    >>> model = DPRidge(feature_bounds=1.0, random_state=0).fit(X, X[:, 0])
    >>> path = os.path.join(tempfile.mkdtemp(), "model.json")
    >>> _ = model.save(path)
    >>> again = load_model(path)
    >>> bool(np.array_equal(again.predict(X), model.predict(X)))
    True
    """
    path = Path(path)
    where = repr(str(path))
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise UnreadableFileError(f"cannot read a dpglm model from {where}: {err}") from err
    if isinstance(document, dict) and document.get("format") == PIPELINE_FORMAT:
        from dpglm.estimators.pipeline_files import pipeline_from_document

        return pipeline_from_document(document, where)
    if not isinstance(document, dict) or document.get("format") != MODEL_FORMAT:
        raise UnreadableFileError(
            f'{where} is not a dpglm model file (no "format": "{MODEL_FORMAT}" tag)'
        )
    return model_from_document(document, where)


def model_from_document(document: dict, where: str, reopen=None):
    """The estimator a model document (:func:`model_document`) describes; ``where`` names
    its file in messages, ``reopen(reference, where)`` gives its budget back (default
    :func:`reopen_budget`)."""
    version = document.get("version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise UnreadableFileError(
            f"{where} has model format version {version!r}; this dpglm reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}"
        )
    # the estimators build on this module (their save method): their catalogue is
    # read when a file is loaded
    from dpglm.estimators import ESTIMATORS

    cls = ESTIMATORS.get(document.get("estimator"))
    if cls is None:
        raise UnreadableFileError(
            f"{where} names an unknown estimator {document.get('estimator')!r}; known: "
            f"{sorted(ESTIMATORS)}"
        )
    try:
        model = _rebuild(cls, document)
    except (KeyError, TypeError, ValueError) as err:
        detail = f"missing field {err}" if isinstance(err, KeyError) else str(err)
        raise UnreadableFileError(f"{where} is not a valid dpglm model file: {detail}") from err
    model.budget = (reopen or reopen_budget)(document.get("budget"), where)
    return model


def _rebuild(cls, document):
    params = from_json_numbers(document["params"])
    if not isinstance(params, dict):
        raise TypeError(f"params must be an object, got {type(params).__name__}")
    params.pop("budget", None)
    model = cls(**params)
    coef = np.asarray(document["coef"], dtype=float)
    n_features = document["n_features_in"]
    encoding = None
    if document.get("encoding") is not None:
        from dpglm.estimators.tables import TableEncoding

        encoding = TableEncoding.from_dict(document["encoding"])
        if len(encoding.columns) != n_features:
            raise ValueError(f"encoding has {len(encoding.columns)} columns, not {n_features}")
    width = n_features if encoding is None else encoding.n_encoded
    intercept = np.asarray(from_json_numbers(document["intercept"]), dtype=float)
    classes = document.get("classes") if cls._task == "classification" else None
    # one row of coefficients and one intercept per class beyond two
    rows = len(classes) if classes is not None and len(classes) > 2 else None
    shape = (width,) if rows is None else (rows, width)
    if type(n_features) is not int or coef.shape != shape:
        raise ValueError(
            f"coef has shape {coef.shape}, expected {shape} (n_features_in {n_features!r}"
            + ("" if rows is None else f", {rows} classes")
            + ")"
        )
    if intercept.shape != shape[:-1]:
        raise ValueError(f"intercept has shape {intercept.shape}, expected {shape[:-1]}")
    model._set_model(coef, intercept)
    model.scaling_ = Scaling.from_dict(document["scaling"])
    if model.scaling_.n_features != width:
        raise ValueError(f"scaling has {model.scaling_.n_features} features, not {width}")
    model.n_features_in_ = n_features
    if encoding is not None:
        model.encoding_ = encoding
        model.encoded_feature_names_ = encoding.feature_names_out
    names = document.get("feature_names_in")
    if names is not None:
        if len(names) != n_features or not all(isinstance(v, str) for v in names):
            raise ValueError(f"feature_names_in must be {n_features} strings, got {names!r}")
        model.feature_names_in_ = np.asarray(names, dtype=object)
    if cls._task == "classification":
        model.classes_ = np.asarray(document["classes"])
        ClassLabels.of(model.classes_)  # distinct classes in sorted order
        multi_class = document.get("multi_class") or "binary"
        expected = ("binary",) if rows is None else ("multinomial", "ovr")
        if multi_class not in expected:
            raise ValueError(
                f"multi_class is {multi_class!r}; {len(model.classes_)} classes take one of "
                f"{expected}"
            )
        model.multi_class_ = multi_class
        public = model._public_labels()
        if public is not None and public.classes.tolist() != model.classes_.tolist():
            raise ValueError(
                f"classes {model.classes_.tolist()!r} differ from the classes parameter "
                f"{params['classes']!r}"
            )
    model.solver_ = str(document["solver"])
    model.n_iter_ = int(document["n_iter"])
    model.delta_ = float(document["delta"])
    model.privacy_report_ = PrivacyReport.from_dict(document["privacy_report"])
    return model


def from_json_numbers(value):
    """``value`` read from JSON, the strings ``"inf"``, ``"-inf"`` and ``"nan"`` as floats."""
    if isinstance(value, dict):
        return {k: from_json_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_json_numbers(v) for v in value]
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float(value)
    return value


def reopen_budget(reference, where):
    """The budget a saved :func:`budget_reference` names: a persistent ledger reopened; None,
    with a warning, for an in-memory one or a ledger gone."""
    if reference is None:
        return None
    ledger = reference.get("ledger") if isinstance(reference, dict) else None
    if ledger is None:
        warnings.warn(
            f"the model in {where} was fitted with an in-memory PrivacyBudget, which is not "
            "saved: the loaded model has budget=None, so refitting it is not charged to any "
            "budget",
            UserWarning,
            stacklevel=3,
        )
        return None
    from dpglm.privacy.budget import PrivacyBudget

    if not Path(ledger).exists():
        warnings.warn(
            f"the budget ledger {ledger} of the model in {where} no longer exists: the "
            "loaded model has budget=None, so refitting it is not charged to any budget",
            UserWarning,
            stacklevel=3,
        )
        return None
    return PrivacyBudget.open(ledger, dataset=reference.get("dataset"))


def jsonable(value):
    """``value`` with arrays as lists, numpy scalars as Python's, non-finite floats as strings."""
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else ("-inf" if value < 0 else "nan")
    return value


def params_document(params):
    """Hyperparameters as JSON (``random_state`` saved as null); refuses what JSON cannot hold."""
    document = {}
    for name, value in params.items():
        if name == "random_state":
            value = None  # the seed would give the fit's noise away (see save)
        value = jsonable(value)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise TypeError(f"cannot save parameter {name}={value!r} as JSON ({err})") from err
        document[name] = value
    return document


def budget_reference(budget):
    """How a file names ``budget``: null, ``{"ledger": null}`` (in memory) or its ledger."""
    if budget is None:
        return None
    if budget.persistent:
        return {"ledger": str(Path(budget.ledger_path).resolve()), "dataset": budget.dataset}
    return {"ledger": None}
