"""Releases: the one place where a calibrated event becomes noise.

A fit's plan is calibrated and charged by :func:`~dpglm.privacy.spending.spend`;
the solver then runs each of its events through a :class:`Release`, the event
bound to the fit's :class:`~dpglm.privacy.mechanisms.NoiseSource`
(``spent.release(i)``). The solver names the sensitivity of what it releases,
as it is derived (``2.0, C_j, over=n`` for the mean of terms clipped to
``C_j``), and the release turns it into the noise scale and into draws of the
event's noise family: Gaussian (Gaussian and subsampled Gaussian events),
Laplace, or the noise of a report-noisy-max (Laplace, Gumbel or exponential).
Nothing else in dpglm draws noise or multiplies a noise multiplier by a
sensitivity, so that auditing the noise of a fit is auditing this module and
the solver's plan; the audits' broken variants patch :meth:`Release.scale`.

A release adds the noise itself (:meth:`Release.add`, :meth:`Release.noise`,
:meth:`Release.noisy_max`, :meth:`Release.noisy_min`), or hands a kernel what
it needs to add it: the scale (:meth:`Release.scale`) with the unit draws of
the family (:meth:`Release.unit`), or with the Generator that draws them
inside the kernel (:attr:`Release.generator`). The release of a non-private
fit (``epsilon = inf``, multiplier 0) has scale 0 and draws nothing: its unit
draws are zeros and its selections exact.

Examples
--------
>>> import numpy as np
>>> from dpglm.privacy.events import GaussianEvent
>>> from dpglm.privacy.mechanisms import make_noise_source
>>> from dpglm.privacy.releases import Release
>>> release = Release(GaussianEvent(noise_multiplier=2.0, sensitivity=0.5), make_noise_source(0))
>>> release.scale(), release.scale(2.0, np.array([1.0, 3.0]), over=4.0)
(1.0, array([1., 3.]))
>>> release.add(np.zeros(3)).shape
(3,)
>>> Release(GaussianEvent(noise_multiplier=0.0)).unit(2)  # non-private: no noise, no draw
array([0., 0.])
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from dpglm.privacy.events import (
    Event,
    GaussianEvent,
    LaplaceEvent,
    NoisyMaxEvent,
    SampledGaussianEvent,
)
from dpglm.privacy.mechanisms import (
    NoiseSource,
    add_gaussian,
    add_laplace,
    check_noise_source,
    finite_array,
    noise_scale_of,
    noisy_argmax,
    size_shape,
)

__all__ = ["Release"]


def _family(event) -> str | None:
    """The noise an event's mechanism adds; None for an event without noise."""
    if isinstance(event, GaussianEvent | SampledGaussianEvent):
        return "gaussian"
    if isinstance(event, LaplaceEvent):
        return "laplace"
    if isinstance(event, NoisyMaxEvent):
        return event.noise
    return None


@dataclass(frozen=True)
class Release:
    """One calibrated event of a fit, bound to the fit's noise source.

    Parameters
    ----------
    event : Event
        A calibrated event with noise (Gaussian, subsampled Gaussian, Laplace
        or noisy max); its ``noise_multiplier`` is 0 in a non-private fit.
    source : NoiseSource, optional
        Where its draws come from; a release without one computes scales but
        cannot draw (:meth:`bind` gives it one, e.g. a party's own stream).

    Raises
    ------
    TypeError
        If ``event`` has no noise to release.

    Examples
    --------
    >>> from dpglm.privacy.events import NoisyMaxEvent
    >>> from dpglm.privacy.mechanisms import make_noise_source
    >>> selection = Release(NoisyMaxEvent(noise_multiplier=1.0, sensitivity=0.1))
    >>> selection.family, selection.private
    ('gumbel', True)
    >>> selection.bind(make_noise_source(0)).noisy_max([0.0, 100.0, 1.0])
    1
    """

    event: Event
    source: NoiseSource | None = None

    def __post_init__(self):
        if _family(self.event) is None:
            raise TypeError(f"a release needs an event with noise, got {self.event!r}")

    @property
    def family(self) -> str:
        """``"gaussian"``, ``"laplace"``, ``"gumbel"`` or ``"exponential"``."""
        return _family(self.event)

    @property
    def multiplier(self) -> float:
        """The event's calibrated noise multiplier (0 in a non-private fit)."""
        return self.event.noise_multiplier

    @property
    def private(self) -> bool:
        """Whether the release adds noise (a positive multiplier)."""
        return self.multiplier > 0.0

    def bind(self, source: NoiseSource) -> Release:
        """The same release drawing from ``source``."""
        return replace(self, source=source)

    def scale(self, *factors, over=None):
        """The noise scale: the multiplier times the sensitivity ``factors... / over``.

        Parameters
        ----------
        *factors : float or ndarray
            The sensitivity, as the product of these factors (left to right),
            each a number or an array (per-coordinate sensitivities); none: the
            event's own ``sensitivity``.
        over : float, optional
            The sensitivity's divisor (e.g. ``n`` for a mean).

        Returns
        -------
        float or ndarray
            The standard deviation (Gaussian) or scale (otherwise) of the
            noise; zeros of the sensitivity's shape in a non-private fit.

        Raises
        ------
        ValueError
            If no sensitivity is given and the event records none, or the
            scale of a private release is not finite and ``>= 0``.

        Examples
        --------
        >>> from dpglm.privacy.events import LaplaceEvent
        >>> Release(LaplaceEvent(noise_multiplier=4.0, sensitivity=0.25)).scale()
        1.0
        >>> Release(LaplaceEvent(noise_multiplier=0.0)).scale(np.ones(2))
        array([0., 0.])
        """
        if not self.private:
            shapes = [np.shape(f) for f in factors] + ([] if over is None else [np.shape(over)])
            shape = np.broadcast_shapes(*shapes) if shapes else ()
            return np.zeros(shape) if shape else 0.0
        if not factors:
            if self.event.sensitivity is None:
                raise ValueError(
                    f"the {self.event.kind} event {self.event.label!r} records no sensitivity: "
                    "give it to the release"
                )
            factors = (self.event.sensitivity,)
        multiplier = self.multiplier
        if not math.isfinite(multiplier):
            raise ValueError(f"the noise multiplier must be finite, got {multiplier!r}")
        scale = noise_scale_of(multiplier, *factors, over=over)
        if not np.all(np.isfinite(scale) & (np.asarray(scale) >= 0.0)):
            raise ValueError(
                f"the noise scale of {self.event.label or self.event.kind!r} must be finite and "
                f">= 0, got {scale!r}: is the sensitivity finite?"
            )
        return scale

    def _sensitivity(self, sensitivity) -> tuple:
        return () if sensitivity is None else (sensitivity,)

    def _source(self) -> NoiseSource:
        if self.source is None:
            raise ValueError("the release is not bound to a noise source (see Release.bind)")
        return check_noise_source(self.source)

    @property
    def generator(self):
        """The source's Generator, for a kernel that draws the unit Gaussian noise itself.

        ``None`` when the release adds no noise or its source has no Generator
        (the secure source): the kernel then reads :meth:`unit` draws.
        """
        if not self.private or self.source is None:
            return None
        if self.family != "gaussian":
            raise TypeError(f"kernels draw Gaussian noise only, not {self.family} noise")
        return self.source.generator

    def unit(self, size=None, *, always: bool = False) -> np.ndarray:
        """Draws of the event's noise at scale 1, for a kernel that scales them by :meth:`scale`.

        Parameters
        ----------
        size : int or tuple of int, optional
        always : bool, default=False
            Draw even when the release adds no noise (its scale is then 0), so
            that the draws after these follow the stream of a private fit with
            the same seed.

        Returns
        -------
        ndarray
            Standard normal, Laplace, Gumbel or exponential draws of scale 1;
            zeros, drawing nothing, when the release adds no noise (unless ``always``).

        Examples
        --------
        >>> from dpglm.privacy.events import LaplaceEvent
        >>> from dpglm.privacy.mechanisms import make_noise_source
        >>> release = Release(LaplaceEvent(noise_multiplier=1.0), make_noise_source(0))
        >>> release.unit((2, 3)).shape
        (2, 3)
        """
        if not (self.private or always):
            return np.zeros(size_shape(size))
        source = self._source()
        family = self.family
        if family == "gaussian":
            draws = source.standard_normal(size)
        elif family == "laplace":
            draws = source.laplace(1.0, size)
        elif family == "gumbel":
            draws = source.gumbel(1.0, size)
        else:
            draws = source.exponential(1.0, size)
        return np.asarray(draws)

    def noise(self, size=None, *, sensitivity=None):
        """Draws of the event's noise at its scale (a single number).

        Parameters
        ----------
        size : int or tuple of int, optional
            ``None`` for one float.
        sensitivity : float, optional
            Defaults to the event's.

        Returns
        -------
        float or ndarray
            Zeros when the release adds no noise.

        Examples
        --------
        >>> from dpglm.privacy.events import LaplaceEvent
        >>> from dpglm.privacy.mechanisms import make_noise_source
        >>> release = Release(LaplaceEvent(noise_multiplier=1.0, sensitivity=0.5))
        >>> isinstance(release.bind(make_noise_source(0)).noise(), float)
        True
        """
        scale = self.scale(*self._sensitivity(sensitivity))
        if not self.private:
            return 0.0 if size is None else np.zeros(size_shape(size))
        source = self._source()
        family = self.family
        if family == "gaussian":
            draws = scale * np.asarray(source.standard_normal(size))
            return float(draws) if size is None else draws
        if family == "laplace":
            return source.laplace(scale, size)
        if family == "gumbel":
            return source.gumbel(scale, size)
        return source.exponential(scale, size)

    def add(self, values, *, sensitivity=None):
        """``values`` plus the event's Gaussian or Laplace noise, elementwise.

        Parameters
        ----------
        values : float or array_like
            The query's value(s), finite.
        sensitivity : float, optional
            Of the whole array (L2 for Gaussian, L1 for Laplace noise);
            defaults to the event's.

        Returns
        -------
        float or ndarray
            Same shape as ``values``; ``values`` unchanged when the release adds no noise.

        Examples
        --------
        >>> from dpglm.privacy.events import GaussianEvent
        >>> from dpglm.privacy.mechanisms import make_noise_source
        >>> release = Release(GaussianEvent(noise_multiplier=1.0, sensitivity=1.0))
        >>> isinstance(release.bind(make_noise_source(0)).add(3.0), float)
        True
        """
        family = self.family
        if family not in ("gaussian", "laplace"):
            raise TypeError(f"a {family} noisy max selects (noisy_max, noisy_min), adds nothing")
        if not self.private:
            values = np.array(values, dtype=np.float64)
            return float(values) if values.ndim == 0 else values
        scale = self.scale(*self._sensitivity(sensitivity))
        if family == "gaussian":
            return add_gaussian(values, scale, self._source())
        return add_laplace(values, scale, self._source())

    def _select(self, scores, sensitivity):
        if not isinstance(self.event, NoisyMaxEvent):
            raise TypeError(f"a {self.event.kind} event adds noise (add), it does not select")
        scores = finite_array(scores, "scores")
        if not self.private:
            index = np.argmax(scores, axis=-1)
            return int(index) if scores.ndim == 1 else index
        scale = self.scale(*self._sensitivity(sensitivity))
        return noisy_argmax(scores, scale, self.family, self._source())

    def noisy_max(self, scores, *, sensitivity=None):
        """Index of the largest score plus the event's noise (exact when it adds none).

        Parameters
        ----------
        scores : array_like of shape (..., k)
            Candidates on the last axis; leading axes are independent selections.
        sensitivity : float, optional
            The largest change of any one score between neighbours; defaults to the event's.

        Returns
        -------
        int or ndarray of int
        """
        return self._select(scores, sensitivity)

    def noisy_min(self, values, *, sensitivity=None):
        """Index of the smallest value: :meth:`noisy_max` of ``-values``.

        Examples
        --------
        >>> from dpglm.privacy.events import NoisyMaxEvent
        >>> from dpglm.privacy.mechanisms import make_noise_source
        >>> release = Release(NoisyMaxEvent(noise_multiplier=1.0, sensitivity=1.0))
        >>> release.bind(make_noise_source(0)).noisy_min([5.0, -100.0, 4.0])
        1
        """
        return self._select(-finite_array(values, "values"), sensitivity)
