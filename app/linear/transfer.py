"""A linearised rig as transfer functions and singular values.

``transfer_functions``: for each input/output pair of a ``Linear`` (continuous-time, or discrete
over its timestep: then in z), the numerator and denominator coefficients (highest power first)
through ``scipy.signal.ss2tf``, and the poles, zeros and gain through ``scipy.signal.ss2zpk``
-- what python-control's ``ss2tf`` and ``zpk`` give for the same matrices. Past ``MOST_STATES``
states the polynomials' coefficients lose their meaning (a polynomial of degree 50 rounds its
roots away), so only poles, zeros and gain are given, with a warning.

``singular_values``: the singular values of the response matrix H(f) (outputs x inputs) at the
Bode frequencies, largest first: a MIMO response's gain in its strongest and weakest directions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mjrig.linear.analysis import Analysis
    from mjrig.runtime.analysis.linearise import Linear

__all__ = ["transfer_functions", "singular_values", "MOST_STATES"]

MOST_STATES = 50
"""States past which a transfer function's polynomials are left out (poles and zeros kept)."""


def _listed(values: np.ndarray) -> list[Any]:
    """Complex numbers as [re, im] pairs, real ones as plain floats (JSON and .mat both take it)."""
    values = np.atleast_1d(values)
    if np.all(np.abs(values.imag) <= 1e-12 * np.maximum(1.0, np.abs(values.real))):
        return [float(v.real) for v in values]
    return [[float(v.real), float(v.imag)] for v in values]


def transfer_functions(lin: Linear, *, warn: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Each (input, output) pair of ``lin`` (inputs outer): its ``input`` and ``output`` names,
    ``num`` and ``den`` (polynomial coefficients, highest power first, in s or z), ``poles``,
    ``zeros`` (complex as [re, im]) and ``gain``; ``warn(line)`` is told once when there are
    more than ``MOST_STATES`` states and the polynomials are left out."""
    import warnings

    from scipy import signal

    n = lin.A.shape[0]
    polynomials = n <= MOST_STATES
    if not polynomials and warn is not None:
        warn(
            f"--tf: {n} states: the polynomials of a transfer function this long are ill-conditioned; "
            "only poles, zeros and gains are written"
        )
    out = []
    for j, name in enumerate(lin.inputs):
        num = den = None
        if polynomials:
            with warnings.catch_warnings():  # a numerator's leading ~0 coefficients: kept, as python-control's
                warnings.simplefilter("ignore", signal.BadCoefficients)
                num, den = signal.ss2tf(lin.A, lin.B, lin.C, lin.D, input=j)
        for i, output in enumerate(lin.outputs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", signal.BadCoefficients)
                z, p, k = signal.ss2zpk(lin.A, lin.B, lin.C[i : i + 1], lin.D[i : i + 1], input=j)
            entry: dict[str, Any] = {
                "input": name,
                "output": output,
                "poles": _listed(p),
                "zeros": _listed(z),
                "gain": float(np.real(k)),
                "variable": "z" if lin.discrete else "s",
            }
            if num is not None and den is not None:
                entry["num"] = [float(c) for c in np.atleast_2d(num)[i]]
                entry["den"] = [float(c) for c in den]
            out.append(entry)
    return out


def singular_values(an: Analysis) -> dict[str, Any]:
    """The singular values of ``an``'s response matrix at its Bode frequencies (Hz):
    ``{"frequency_hz": [...], "values": [[σ1, σ2, ...] per frequency], "inputs", "outputs"}``,
    σ in the outputs' units per the inputs' (mixed units: as given, SI)."""
    from mjrig.runtime.analysis.modes import frequencies, response

    lin = an.linear
    f = frequencies(an.modes, lin.dt)
    H = np.empty((f.size, len(lin.outputs), len(lin.inputs)), complex)
    for i in range(len(lin.outputs)):
        for j in range(len(lin.inputs)):
            H[:, i, j] = response(lin, f, output=i, input=j)
    sigma = np.linalg.svd(H, compute_uv=False)
    return {
        "frequency_hz": f.tolist(),
        "values": sigma.tolist(),
        "inputs": list(lin.inputs),
        "outputs": list(lin.outputs),
    }
