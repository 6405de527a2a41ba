"""Argument checks shared by every gpubook module, so that each one rejects the same bad
input.

Each checker returns the value it accepted (so ``n = positive_int("n", n)`` reads
naturally) and raises with a message that names the argument:

* :class:`ArgumentTypeError` when the value is not a number at all (a string, ``None``)
  or is a ``bool`` (``True`` is an ``int`` in Python, but ``repeat=True`` is always a
  mistake); it is both a :class:`TypeError` and a :class:`ValueError`, so callers that
  caught ``ValueError`` before the checks were shared still catch it;
* :class:`ValueError` when it is a number of the right kind but out of range (zero,
  negative, NaN, infinite).
"""

from __future__ import annotations

import math
import numbers

__all__ = ["ArgumentTypeError", "finite_number", "positive_int", "positive_number"]


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type (a str, None, a bool where a number is meant)."""


def _real(name: str, value: object) -> float:
    """``value`` as a float if it is a real number and not a bool; TypeError
    otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(
            f"{name} must be a number, got {type(value).__name__} {value!r}"
        )
    return float(value)


def finite_number(name: str, value: object) -> float:
    """Accept any finite real number (negative and zero included); reject bool, NaN and
    inf."""
    number = _real(name, value)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value  # type: ignore[return-value]


def positive_number(
    name: str, value: object, *, allow_zero: bool = False, finite: bool = True
):
    """Accept a real number > 0 (>= 0 with ``allow_zero``); finite unless
    ``finite=False``.

    NaN is always rejected; ``+inf`` only passes with ``finite=False``. Returns
    ``value``.
    """
    number = _real(name, value)
    if math.isnan(number):
        raise ValueError(f"{name} must be a number, got NaN")
    if finite and math.isinf(number):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if number < 0 or (number == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise ValueError(f"{name} must be a {bound} number, got {value!r}")
    return value


def positive_int(
    name: str, value: object, *, allow_zero: bool = False, minimum: int | None = None
):
    """Accept an int > 0 (>= 0 with ``allow_zero``, >= ``minimum`` when given); reject
    bool.

    NumPy integers pass; floats (even ``3.0``) do not. Returns ``value``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(
            f"{name} must be an int, got {type(value).__name__} {value!r}"
        )
    if minimum is None:
        minimum = 0 if allow_zero else 1
    if value < minimum:
        if minimum == 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
        if minimum == 0:
            raise ValueError(f"{name} must be a non-negative int, got {value!r}")
        raise ValueError(f"{name} must be an int of at least {minimum}, got {value!r}")
    return value
