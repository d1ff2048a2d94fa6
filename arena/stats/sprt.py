"""Sequential testing of NEW against OLD on duplicate pairs: a generalized SPRT. Pure (numpy only, no I/O).

**Samples.** A duplicate pair is two matches on the same decks with the seats swapped. Its
score for NEW is the mean of the two match scores. A Sixty-Six match has no draw, so a pair
scores 0, 1/2 or 1 (lost both, split, won both). Chess games can be drawn, so fishtest's pairs
score 0, 1/4, 1/2, 3/4 or 1: the *pentanomial* counts ``[n0, n1/4, n1/2, n3/4, n1]``. Ours is
the pentanomial with the 1/4 and 3/4 cells always empty, a *trinomial* on ``{0, 1/2, 1}``.
All functions here take any outcome values; the named entry points are the two cases.

**GSPRT (fishtest's method).** Nothing is assumed about the shape of the outcome
distribution; a hypothesis fixes only its mean score ``s`` (logistic Elo:
``s = 1 / (1 + 10 ** (-elo / 400))``, the same for a pair as for one match). Each hypothesis
gets the distribution of largest likelihood with that mean. With the empirical frequencies
``q_i`` on the values ``v_i`` and ``a_i = v_i - s``, the maximiser is
``p_i = q_i / (1 + x a_i)`` where the Lagrange multiplier ``x`` solves
``sum_i q_i a_i / (1 + x a_i) = 0`` on the interval where every ``1 + x a_i > 0``; the left
side falls strictly there, so the root is unique (safeguarded Newton here). The statistic is

    LLR = N * sum_i q_i * log(p1_i / p0_i)

for H1 (``elo1``) against H0 (``elo0``). As in fishtest, an empty cell is first given the
count 1e-3 (``REGULARIZATION``; ``N`` then includes these), so the results agree with
fishtest's ``LLR_logistic``. Because of that, a pentanomial with empty 1/4 and 3/4 cells is
not quite our trinomial: the two phantom cells shift the LLR by about 1e-4 relative on a
thousand pairs. ``llr_pairs`` therefore uses the three cells that exist (what fishtest does
with a length-3 result list); with ``regularize=False`` both forms agree exactly.

**Normalized Elo** (fishtest's ``LLR_normalized``): a hypothesis fixes the t-value
``(mean - 1/2) / sigma`` of a sample instead of the mean; ``nelo = nt * 800 / ln 10`` with
``nt`` the per-game t-value, and a pair's t-value is ``sqrt(2) * nt``. The constrained MLE
is found by fishtest's fixed-point iteration, here run to convergence.

**Wald bounds.** Stop for H0 when ``LLR <= log(beta / (1 - alpha))`` and for H1 when
``LLR >= log((1 - beta) / alpha)``; the error rates are then at most about ``alpha`` and
``beta`` (less in practice: the LLR overshoots the bound).

**Estimates.** Elo comes from the mean pair score ``m``: ``elo = -400 log10(1/m - 1)``. Its
standard error is the pair-score standard error (sample variance of the pair scores, so
the correlation of the two matches of a pair is taken into account) times
``d elo / d m = 400 / (ln 10 * m * (1 - m))`` (delta method); intervals are ``elo +- z se``.
LOS is ``Phi((m - 1/2) / se_m)``. Normalized Elo is ``(m - 1/2) / (sqrt(2) sd)`` in units of
``800 / ln 10``, its interval the mean's interval on that scale (as fishtest shows it): its
half-width, ``z 800 / (ln 10 sqrt(2 n))``, depends only on the number of pairs. The
game-point margin statistic is a diagnostic only.

**One-sided results.** When NEW won every one of ``n`` pairs the estimate is infinite and
the delta method has nothing to work with; the interval is then ``[bound, +inf)``, with
``bound`` the Elo of the exact (Clopper-Pearson) lower confidence limit of the chance of a
won pair, ``((1 - confidence) / 2) ** (1 / n)``: the mean pair score is at least that
chance. Every pair lost is the mirror image. `elo_text` says either in words, and says so
when every pair split 1-1 (no spread: no interval, no evidence either way; two copies of one
program do that, as agents' seeds derive from the match and the seat).
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

Model = Literal["logistic", "normalized"]
Status = Literal["continue", "H0", "H1", "cap"]

Z95 = 1.959963984540054
REGULARIZATION = 1e-3  # fishtest's stand-in count for an empty cell
NELO_PER_NT = 800.0 / math.log(10.0)  # normalized Elo per unit of per-game t-value
PENTANOMIAL_VALUES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
PAIR_VALUES = np.array([0.0, 0.5, 1.0])
PAIR_SCORES = (0.0, 0.5, 1.0)

_NEWTON_MAX = 200
_FIXED_POINT_MAX = 500


# -- small helpers -------------------------------------------------------------------------------


def logistic_score(elo: float) -> float:
    """Expected score for a logistic Elo difference."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def score_to_elo(score: float) -> float:
    """Logistic Elo for an expected score; -inf at 0 and +inf at 1."""
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


_NORMAL = statistics.NormalDist()


def normal_cdf(z: float) -> float:
    """Standard normal distribution function (the standard library's)."""
    return _NORMAL.cdf(z)


def normal_quantile(p: float) -> float:
    """Inverse of `normal_cdf`, for ``0 < p < 1`` (the standard library's)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability must be in (0, 1), got {p}")
    return _NORMAL.inv_cdf(p)


def _z(confidence: float) -> float:
    if confidence == 0.95:
        return Z95
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return normal_quantile(0.5 + confidence / 2.0)


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's bounds ``(log(beta / (1 - alpha)), log((1 - beta) / alpha))`` for the LLR."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError(f"need 0 < alpha, beta and alpha + beta < 1; got alpha={alpha}, beta={beta}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def regularize(counts: npt.ArrayLike) -> np.ndarray:
    """Counts as floats with every empty cell set to ``REGULARIZATION`` (fishtest's rule)."""
    c = np.array(counts, dtype=float)
    c[c == 0] = REGULARIZATION
    return c


def _check_counts(counts: npt.ArrayLike, k: int | None = None) -> np.ndarray:
    c = np.asarray(counts, dtype=float)
    if c.ndim == 0 or (k is not None and c.shape[-1] != k):
        raise ValueError(f"expected counts with last axis of length {k}, got shape {c.shape}")
    if not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("counts must be finite and non-negative")
    return c


# -- constrained maximum likelihood ---------------------------------------------------------------


def solve_multiplier(weights: npt.ArrayLike, a: npt.ArrayLike) -> np.ndarray:
    """The root ``x`` of ``sum_i w_i a_i / (1 + x a_i) = 0`` with every ``1 + x a_i > 0`` where
    ``w_i > 0`` (cells with ``w_i = 0`` are ignored). Vectorised over the leading axes.

    Needs some ``a_i < 0 < a_j`` among the weighted cells (the target lies strictly inside the
    observed values); raises ValueError otherwise."""
    w = np.asarray(weights, dtype=float)
    a = np.broadcast_to(np.asarray(a, dtype=float), w.shape)
    pos = w > 0
    amax = np.max(np.where(pos, a, -np.inf), axis=-1)
    amin = np.min(np.where(pos, a, np.inf), axis=-1)
    if not (np.all(amax > 0) and np.all(amin < 0)):
        raise ValueError("the constraint is not inside the range of the observed values")
    lo, hi = -1.0 / amax, -1.0 / amin  # the function runs from +inf at lo to -inf at hi
    aw = np.where(pos, a, 0.0)
    x = np.zeros(amax.shape)
    for _ in range(_NEWTON_MAX):
        d = 1.0 + x[..., None] * aw
        r = aw / d
        f = np.sum(w * r, axis=-1)
        fp = -np.sum(w * r * r, axis=-1)
        lo = np.where(f > 0, x, lo)
        hi = np.where(f < 0, x, hi)
        with np.errstate(divide="ignore", invalid="ignore"):
            xn = x - f / fp
        outside = ~((xn > lo) & (xn < hi))
        xn = np.where(outside, 0.5 * (lo + hi), xn)
        done = (f == 0) | (np.abs(xn - x) <= 1e-15 * np.maximum(1.0, np.abs(x))) | (hi - lo <= 1e-15 * np.abs(x))
        x = np.where(f == 0, x, xn)
        if np.all(done):
            break
    return x


def mle_given_mean(freqs: npt.ArrayLike, values: npt.ArrayLike, mean: float | npt.ArrayLike) -> np.ndarray:
    """The distribution on ``values`` with the given mean that maximises the likelihood of the
    empirical frequencies ``freqs`` (last axis; vectorised over the leading axes)."""
    q = np.asarray(freqs, dtype=float)
    q = q / np.sum(q, axis=-1, keepdims=True)
    a = np.asarray(values, dtype=float) - np.asarray(mean, dtype=float)[..., None]
    a = np.broadcast_to(a, q.shape)
    x = solve_multiplier(q, a)
    d = 1.0 + x[..., None] * a
    if np.any((q == 0) & (d < 0)):  # then the maximiser would put mass on an empty cell
        raise ValueError("an empty cell lies outside the observed values; use regularization")
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(q > 0, q / d, 0.0)


def mle_given_t(freqs: npt.ArrayLike, values: npt.ArrayLike, ref: float, t: float) -> np.ndarray:
    """The distribution on ``values`` with t-value ``(mean - ref) / sd = t`` that maximises the
    likelihood of ``freqs``: fishtest's fixed-point iteration (``MLE_t_value``), run until it
    settles. Vectorised over the leading axes."""
    q = np.asarray(freqs, dtype=float)
    q = q / np.sum(q, axis=-1, keepdims=True)
    v = np.asarray(values, dtype=float)
    p = np.full(q.shape, 1.0 / q.shape[-1])
    prev = math.inf
    for _ in range(_FIXED_POINT_MAX):
        mu = np.sum(p * v, axis=-1, keepdims=True)
        sigma = np.sqrt(np.sum(p * (v - mu) ** 2, axis=-1, keepdims=True))
        a = v - ref - t * sigma * (1.0 + ((mu - v) / sigma) ** 2) / 2.0
        x = solve_multiplier(q, a)
        with np.errstate(divide="ignore", invalid="ignore"):
            pn = np.where(q > 0, q / (1.0 + x[..., None] * a), 0.0)
        delta = float(np.max(np.abs(pn - p)))
        p = pn
        # it converges fast, then jitters at the rounding level (~1e-12): stop there
        if delta < 1e-13 or (delta < 1e-9 and delta >= prev):
            break
        prev = delta
    else:
        if delta > 1e-9:  # it crawls (seen with many cells, a deck set's 13): Newton's method finishes it
            flat_q, flat_p = q.reshape(-1, q.shape[-1]), p.reshape(-1, q.shape[-1]).copy()
            for i in range(len(flat_q)):
                flat_p[i] = _settle_t(flat_q[i], v, ref, t, flat_p[i])
            p = flat_p.reshape(q.shape)
    return p


def _settle_t(q: np.ndarray, v: np.ndarray, ref: float, t: float, p: np.ndarray) -> np.ndarray:
    """`mle_given_t`'s fixed point for one row, by Newton's method on the mean and sd that the
    iteration maps to themselves (a finite-difference Jacobian), from where the iteration
    stopped; ValueError if it does not settle either."""

    def image(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mu, sigma = z
        a = v - ref - t * sigma * (1.0 + ((mu - v) / sigma) ** 2) / 2.0
        x = solve_multiplier(q, a)
        with np.errstate(divide="ignore", invalid="ignore"):
            pn = np.where(q > 0, q / (1.0 + x * a), 0.0)
        m = float(pn @ v)
        return pn, np.array([m, math.sqrt(float(pn @ (v - m) ** 2))])

    m = float(p @ v)
    z = np.array([m, math.sqrt(float(p @ (v - m) ** 2))])
    try:
        for _ in range(50):
            pn, fz = image(z)
            f = fz - z
            if np.max(np.abs(f)) < 1e-14:
                return pn
            jac = np.empty((2, 2))
            for j in range(2):
                h = 1e-7 * max(1.0, abs(z[j]))
                dz = z.copy()
                dz[j] += h
                jac[:, j] = (image(dz)[1] - dz - f) / h
            z = z - np.linalg.solve(jac, f)
            if not (z[1] > 0 and np.all(np.isfinite(z))):
                break
    except (ValueError, np.linalg.LinAlgError):
        pass
    raise ValueError("the t-value constrained MLE did not converge")


def _llr_from(c: np.ndarray, p0: np.ndarray, p1: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        jumps = np.where(c > 0, np.log(p1) - np.log(p0), 0.0)
    return np.sum(c * jumps, axis=-1)


def gsprt_llr(
    counts: npt.ArrayLike, values: npt.ArrayLike, s0: float, s1: float, regularize: bool = True
) -> float | np.ndarray:
    """Generalized LLR of mean ``s1`` against mean ``s0`` for ``counts`` on ``values`` (last
    axis; vectorised over the leading axes). No data gives 0."""
    c = _check_counts(counts, len(np.asarray(values)))
    if not (0.0 < s0 < 1.0 and 0.0 < s1 < 1.0):
        raise ValueError(f"expected scores must be in (0, 1), got {s0}, {s1}")
    empty = np.sum(c, axis=-1) == 0
    c = np.where(empty[..., None], 1.0, c)  # placeholder, result replaced by 0 below
    if regularize:
        c = np.where(c == 0, REGULARIZATION, c)
    p0 = mle_given_mean(c, values, s0)
    p1 = mle_given_mean(c, values, s1)
    out = np.where(empty, 0.0, _llr_from(c, p0, p1))
    return float(out) if out.ndim == 0 else out


def _llr_normalized(
    counts: npt.ArrayLike, values: npt.ArrayLike, t0: float, t1: float, regularize: bool
) -> float | np.ndarray:
    c = _check_counts(counts, len(np.asarray(values)))
    empty = np.sum(c, axis=-1) == 0
    c = np.where(empty[..., None], 1.0, c)
    if regularize:
        c = np.where(c == 0, REGULARIZATION, c)
    p0 = mle_given_t(c, values, 0.5, t0)
    p1 = mle_given_t(c, values, 0.5, t1)
    out = np.where(empty, 0.0, _llr_from(c, p0, p1))
    return float(out) if out.ndim == 0 else out


def _llr_model(
    counts: npt.ArrayLike, values: np.ndarray, elo0: float, elo1: float, model: Model, regularize: bool,
    games: float = 2.0,
) -> float | np.ndarray:  # fmt: skip
    if not (math.isfinite(elo0) and math.isfinite(elo1)):
        raise ValueError("elo0 and elo1 must be finite")
    if model == "logistic":
        return gsprt_llr(counts, values, logistic_score(elo0), logistic_score(elo1), regularize)
    if model == "normalized":
        # a sample stands for ``games`` games (a pair: 2): its t-value is sqrt(games) times the per-game one
        t0, t1 = (math.sqrt(games) * e / NELO_PER_NT for e in (elo0, elo1))
        return _llr_normalized(counts, values, t0, t1, regularize)
    raise ValueError(f"unknown Elo model {model!r} (use 'logistic' or 'normalized')")


def llr_pentanomial(
    counts: npt.ArrayLike, elo0: float, elo1: float, model: Model = "logistic", regularize: bool = True
) -> float | np.ndarray:
    """GSPRT log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0) for pentanomial
    pair counts ``[n0, n1/4, n1/2, n3/4, n1]``, as fishtest computes it (``LLR_logistic`` or
    ``LLR_normalized``). A (..., 5) array gives an array of LLRs."""
    return _llr_model(counts, PENTANOMIAL_VALUES, elo0, elo1, model, regularize)


def llr_pairs(
    losses: npt.ArrayLike,
    halves: npt.ArrayLike,
    wins: npt.ArrayLike,
    elo0: float,
    elo1: float,
    model: Model = "logistic",
    regularize: bool = True,
) -> float | np.ndarray:
    """GSPRT log-likelihood ratio for pair outcomes 0, 1/2, 1 (the pentanomial without its 1/4
    and 3/4 cells). Arrays of counts give an array of LLRs."""
    c = np.stack(np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (losses, halves, wins))), axis=-1)
    return _llr_model(c, PAIR_VALUES, elo0, elo1, model, regularize)


def llr_scores(
    counts: npt.ArrayLike,
    values: npt.ArrayLike,
    elo0: float,
    elo1: float,
    model: Model = "logistic",
    regularize: bool = True,
    games: float = 2.0,
) -> float | np.ndarray:
    """GSPRT log-likelihood ratio for samples of any score ``values`` in [0, 1] (``counts``
    per value, last axis): the pair forms above are its cases. ``games`` is how many games a
    sample stands for in the normalized model (its t-value is ``sqrt(games)`` times the
    per-game one): 2 for a duplicate pair."""
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or np.any((v < 0) | (v > 1)) or not games > 0:
        raise ValueError("values must be a list of scores in [0, 1], and games positive")
    return _llr_model(counts, v, elo0, elo1, model, regularize, games)


# -- estimates -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class EloEstimate:
    """Elo of NEW against OLD from pair scores (logistic), with its interval and LOS."""

    pairs: int
    mean: float  # mean pair score
    sd: float  # sample standard deviation of the pair scores
    se: float  # standard error of the mean pair score
    elo: float
    elo_se: float  # delta method
    ci_low: float
    ci_high: float
    confidence: float
    los: float  # P(NEW stronger), normal approximation
    nelo: float  # normalized Elo (fishtest's per-game convention), NaN if undefined
    nelo_low: float = math.nan  # its interval: the mean's, scaled by the same spread (fishtest's)
    nelo_high: float = math.nan
    #: What a sample is, in words (`elo_text`): "pair", or "deck set" (`ScoreSPRT`).
    sample: str = "pair"

    @property
    def error(self) -> float:
        """Half-width of the interval."""
        return (self.ci_high - self.ci_low) / 2.0


def pair_score_stats(losses: int, halves: int, wins: int) -> tuple[int, float, float]:
    """Number of pairs, mean pair score and sample standard deviation (NaN below 2 pairs)."""
    if min(losses, halves, wins) < 0:
        raise ValueError("counts must be non-negative")
    n = int(losses + halves + wins)
    if n == 0:
        return 0, math.nan, math.nan
    mean = (0.5 * halves + wins) / n
    if n < 2:
        return n, mean, math.nan
    ss = losses * mean**2 + halves * (0.5 - mean) ** 2 + wins * (1.0 - mean) ** 2
    return n, mean, math.sqrt(max(ss, 0.0) / (n - 1))


def elo_estimate(losses: int, halves: int, wins: int, confidence: float = 0.95) -> EloEstimate:
    """Elo from the mean pair score with a delta-method interval, and LOS."""
    n, mean, sd = pair_score_stats(losses, halves, wins)
    return _estimate(n, mean, sd, confidence)


def _estimate(
    n: int, mean: float, sd: float, confidence: float, games: float = 2.0, sample: str = "pair"
) -> EloEstimate:
    """The estimate from ``n`` samples of mean score ``mean`` and standard deviation ``sd``:
    Elo with a delta-method interval (the exact one-sided bound when every sample scored 1,
    or 0), the LOS, and normalized Elo with a sample standing for ``games`` games."""
    z = _z(confidence)
    nan = math.nan
    if n == 0:
        return EloEstimate(0, nan, nan, nan, nan, nan, nan, nan, confidence, nan, nan, sample=sample)
    se = sd / math.sqrt(n) if n >= 2 else nan
    elo = score_to_elo(mean)
    if 0.0 < mean < 1.0 and not math.isnan(se):
        elo = elo + 0.0  # no "-0.0"
        elo_se = se * 400.0 / (math.log(10.0) * mean * (1.0 - mean))
        # every pair split 1-1: no spread, and no interval (not one of width zero)
        lo, hi = (elo - z * elo_se, elo + z * elo_se) if se > 0 else (nan, nan)
    elif n >= 2 and mean in (0.0, 1.0):  # one-sided: an exact bound on one side, none on the other
        elo_se = nan
        bound = score_to_elo(((1.0 - confidence) / 2.0) ** (1.0 / n))
        lo, hi = (bound, math.inf) if mean == 1.0 else (-math.inf, -bound)
    else:
        elo_se, lo, hi = nan, nan, nan
    if math.isnan(se):
        los = nan
    elif se > 0:
        los = normal_cdf((mean - 0.5) / se)
    else:
        los = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    nelo = nelo_low = nelo_high = nan
    if n >= 2 and sd > 0:
        scale = NELO_PER_NT / (math.sqrt(games) * sd)
        nelo, half = (mean - 0.5) * scale, z * se * scale
        nelo_low, nelo_high = nelo - half, nelo + half
    return EloEstimate(n, mean, sd, se, elo, elo_se, lo, hi, confidence, los, nelo, nelo_low, nelo_high, sample)


def elo_text(est: EloEstimate) -> str:
    """Elo and its interval in words, finite and honest whatever the results: a one-sided
    bound when every pair went one way, no interval from one pair, and, when every pair split
    1-1, that it did (no spread, so no interval and no evidence either way) rather than a
    zero-width interval."""
    pct = f"{100 * est.confidence:g}%"
    one = est.sample
    if est.pairs == 0:
        return f"Elo n/a (no {one}s yet)"
    if est.pairs < 2:
        return f"Elo n/a (1 {one}: no interval yet)"
    if est.mean == 1.0:
        return f"Elo > {est.ci_low:+.0f} (every {one} won: {pct} lower bound; no upper bound)"
    if est.mean == 0.0:
        return f"Elo < {est.ci_high:+.0f} (every {one} lost: {pct} upper bound; no lower bound)"
    if est.sd == 0 and one == "pair":  # all pairs scored the same, and not 0 or 1: every pair split 1-1
        return "Elo n/a (every pair split 1-1: no spread to make an interval of, no evidence either way)"
    if est.sd == 0:
        return f"Elo n/a (every {one} scored {est.mean:.3g}: no spread to make an interval of)"
    elo = est.elo + 0.0  # no "-0.0"
    return f"Elo {elo:+.1f} [{est.ci_low:+.1f}, {est.ci_high:+.1f}]"


def estimate_text(est: EloEstimate, model: Model = "logistic") -> str:
    """`elo_text`, led by normalized Elo with its interval when the test is on that scale (the
    bounds' unit) and the spread defines it."""
    if model == "normalized" and math.isfinite(est.nelo):
        nelo = est.nelo + 0.0
        return f"nElo {nelo:+.1f} [{est.nelo_low:+.1f}, {est.nelo_high:+.1f}], {elo_text(est)}"
    return elo_text(est)


def score_estimate(
    counts: Sequence[int], values: npt.ArrayLike, games: float = 2.0, confidence: float = 0.95, sample: str = "pair"
) -> EloEstimate:
    """`elo_estimate` for samples of any score ``values`` in [0, 1] (``counts`` per value): the
    mean score's Elo with a delta-method interval from the samples' spread, the LOS, and
    normalized Elo with a sample standing for ``games`` games (`llr_scores`). Every sample
    scoring 1 (or 0) gives the exact one-sided bound: the chance of a sample scoring 1 is at
    least the Clopper-Pearson limit, and so is the mean."""
    c = np.asarray(counts, dtype=float)
    v = np.asarray(values, dtype=float)
    n = int(c.sum())
    if n == 0:
        return _estimate(0, math.nan, math.nan, confidence, games, sample)
    mean = min(1.0, max(0.0, float(c @ v) / n))
    sd = math.sqrt(max(float(c @ (v - mean) ** 2), 0.0) / (n - 1)) if n >= 2 else math.nan
    return _estimate(n, mean, sd, confidence, games, sample)


def los_text(est: EloEstimate) -> str:
    """LOS as a percentage, never a hard 0% or 100% (it is a normal approximation)."""
    if math.isnan(est.los):
        return "n/a"
    if est.los > 0.999:
        return "> 99.9%"
    if est.los < 0.001:
        return "< 0.1%"
    return f"{100 * est.los:.1f}%"


@dataclasses.dataclass(frozen=True)
class FixedSummary:
    """Outcome of a fixed number of pairs: the estimate and a verdict from the interval."""

    losses: int
    halves: int
    wins: int
    estimate: EloEstimate
    verdict: str


def fixed_games_summary(losses: int, halves: int, wins: int, confidence: float = 0.95) -> FixedSummary:
    """Elo +- interval, LOS and a verdict for a fixed number of pairs. The verdict only says
    whether the interval lies above 0, below 0 or contains it; no p-value."""
    est = elo_estimate(losses, halves, wins, confidence)
    pct = f"{100 * confidence:g}%"
    if est.pairs == 0:
        verdict = "no pairs played"
    elif est.pairs < 2:
        verdict = "too few pairs for an interval"
    elif est.mean == 1.0 and est.ci_low > 0:
        verdict = f"NEW is stronger: it won every pair ({est.pairs}); the {pct} lower bound for Elo is above 0"
    elif est.mean == 0.0 and est.ci_high < 0:
        verdict = f"NEW is weaker: it lost every pair ({est.pairs}); the {pct} upper bound for Elo is below 0"
    elif est.mean in (0.0, 1.0):
        verdict = f"inconclusive: NEW {'lost' if est.mean == 0 else 'won'} every pair, but only {est.pairs}"
    elif est.sd == 0:
        verdict = "inconclusive: every pair split 1-1, so the results cannot tell the two apart"
    elif est.ci_low > 0:
        verdict = f"NEW is stronger: the {pct} interval for Elo lies above 0"
    elif est.ci_high < 0:
        verdict = f"NEW is weaker: the {pct} interval for Elo lies below 0"
    else:
        verdict = f"inconclusive: the {pct} interval for Elo contains 0"
    return FixedSummary(int(losses), int(halves), int(wins), est, verdict)


# -- margins (diagnostic) ------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MarginDiagnostic:
    """Mean game-point margin per pair with its interval; a DIAGNOSTIC, not the test."""

    pairs: int
    mean: float
    sd: float
    se: float
    ci_low: float
    ci_high: float
    confidence: float
    z: float  # mean / se: how many standard errors the mean margin is from 0
    llr: float  # normal-approximation LLR of mean margin1 against margin0; NaN unless both given
    label: str = (
        "diagnostic only: game-point margins per pair (normal approximation). More power than "
        "the pair scores, but the match results decide the test"
    )


def margin_diagnostic(
    margins: Iterable[float],
    confidence: float = 0.95,
    margin0: float | None = None,
    margin1: float | None = None,
) -> MarginDiagnostic:
    """Summary of per-pair margin sums (NEW's game points minus OLD's over both matches of a
    pair): mean, ``confidence`` interval, z-score against 0 and, given ``margin0`` and
    ``margin1``, the Gaussian LLR ``n (m1 - m0) (2 mean - m0 - m1) / (2 var)`` (an LLR-like
    number; fishtest's ``LLR_alt2`` form)."""
    z = _z(confidence)
    x = np.asarray(list(margins), dtype=float)
    n = len(x)
    nan = math.nan
    if n == 0:
        return MarginDiagnostic(0, nan, nan, nan, nan, nan, confidence, nan, nan)
    if not np.all(np.isfinite(x)):
        raise ValueError("margins must be finite")
    mean = float(x.mean())
    if n < 2:
        return MarginDiagnostic(n, mean, nan, nan, nan, nan, confidence, nan, nan)
    sd = float(x.std(ddof=1))
    se = sd / math.sqrt(n)
    if se > 0:
        zscore = mean / se
    else:
        zscore = math.copysign(math.inf, mean) if mean != 0 else nan
    llr = nan
    if margin0 is not None and margin1 is not None and sd > 0:
        llr = n * (margin1 - margin0) * (2.0 * mean - margin0 - margin1) / (2.0 * sd * sd)
    return MarginDiagnostic(n, mean, sd, se, mean - z * se, mean + z * se, confidence, zscore, llr)


# -- the sequential test -------------------------------------------------------------------------


def _pair_index(score: float) -> int:
    try:
        k = 2.0 * float(score)
    except (TypeError, ValueError):
        raise ValueError(f"a pair score must be 0, 0.5 or 1, got {score!r}") from None
    if k not in (0.0, 1.0, 2.0):
        raise ValueError(f"a pair score must be 0, 0.5 or 1, got {score!r}")
    return int(k)


class SPRT:
    """GSPRT on duplicate-pair scores (0, 1/2, 1), fed one pair at a time.

    ``status`` is "continue", "H0" (H0 accepted: the LLR fell to the lower bound: the results
    favour a gain of elo0 over one of elo1), "H1" (H1 accepted: the LLR reached the upper
    bound: they favour elo1 over elo0) or "cap" (``max_pairs`` played without a decision).
    Neither verdict says the true gain is at least or at most a bound; each is a verdict
    that comes at most about ``alpha`` (H1) or ``beta`` (H0) of the time when the other
    hypothesis, or one beyond it, is true (`arena.stats.sprt_plan` simulates how often exactly).
    The first decision is final: pairs added later (say, still in flight when the test
    stopped) update the counts, LLR and estimates but not the status."""

    def __init__(
        self,
        elo0: float,
        elo1: float,
        alpha: float = 0.05,
        beta: float = 0.05,
        max_pairs: int | None = None,
        model: Model = "logistic",
    ) -> None:
        if not (math.isfinite(elo0) and math.isfinite(elo1) and elo0 < elo1):
            raise ValueError(f"need finite elo0 < elo1, got {elo0}, {elo1}")
        if model not in ("logistic", "normalized"):
            raise ValueError(f"unknown Elo model {model!r}")
        if max_pairs is not None and max_pairs < 1:
            raise ValueError(f"max_pairs must be positive, got {max_pairs}")
        self.elo0, self.elo1 = float(elo0), float(elo1)
        self.alpha, self.beta = float(alpha), float(beta)
        self.lower, self.upper = sprt_bounds(alpha, beta)
        self.max_pairs = max_pairs
        self.model: Model = model
        self._counts = [0, 0, 0]
        self.llr = 0.0
        self.llr_path: list[float] = []  # the LLR after each pair
        self.status: Status = "continue"
        self.decided_at: int | None = None  # pairs played when the status was decided

    @property
    def bounds(self) -> tuple[float, float]:
        """(lower, upper) Wald bounds."""
        return self.lower, self.upper

    @property
    def counts(self) -> tuple[int, int, int]:
        """(losses, halves, wins): pairs scoring 0, 1/2 and 1 for NEW."""
        losses, halves, wins = self._counts
        return losses, halves, wins

    @property
    def tally(self) -> tuple[int, int, int]:
        """Samples below 1/2, at 1/2 and above: for pairs, `counts`."""
        return self.counts

    @property
    def pairs(self) -> int:
        return sum(self._counts)

    @property
    def finished(self) -> bool:
        return self.status != "continue"

    def add(self, score: float) -> Status:
        """Record one pair score (0, 0.5 or 1) and return the status."""
        self._counts[_pair_index(score)] += 1
        return self._record(float(llr_pairs(*self._counts, self.elo0, self.elo1, model=self.model)))

    def _record(self, llr: float) -> Status:
        """The LLR after a sample: kept, and the status decided once a bound or the cap is reached."""
        self.llr = llr
        self.llr_path.append(self.llr)
        if self.status == "continue":
            if self.llr >= self.upper:
                self.status = "H1"
            elif self.llr <= self.lower:
                self.status = "H0"
            elif self.max_pairs is not None and self.pairs >= self.max_pairs:
                self.status = "cap"
            if self.status != "continue":
                self.decided_at = self.pairs
        return self.status

    def extend(self, scores: Iterable[float], stop: bool = True) -> Status:
        """Add pair scores in order; with ``stop`` the rest is left out once a status is decided."""
        for score in scores:
            if stop and self.finished:
                break
            self.add(score)
        return self.status

    def estimate(self, confidence: float = 0.95) -> EloEstimate:
        """Elo with its interval and LOS, from the pairs so far."""
        return elo_estimate(*self._counts, confidence=confidence)

    def summary(self) -> dict[str, object]:
        """A flat snapshot (for printing, JSON and the report)."""
        est = self.estimate()
        losses, halves, wins = self.tally
        return {
            "pairs": self.pairs, "losses": losses, "halves": halves, "wins": wins, "llr": self.llr,
            "lower": self.lower, "upper": self.upper, "status": self.status, "elo": est.elo,
            "elo_low": est.ci_low, "elo_high": est.ci_high, "los": est.los, "elo0": self.elo0,
            "elo1": self.elo1, "alpha": self.alpha, "beta": self.beta, "model": self.model,
            "max_pairs": self.max_pairs, "decided_at": self.decided_at,
        }  # fmt: skip

    def line(self) -> str:
        """One progress line: pairs, LLR against the bounds, the estimate with its 95% interval
        (`estimate_text`), LOS (`los_text`), status: the same words as a final result."""
        est = self.estimate()
        losses, halves, wins = self.tally
        return (
            f"pairs {self.pairs} (0: {losses}, 1/2: {halves}, 1: {wins})  LLR {self.llr:.2f} "
            f"[{self.lower:.2f}, {self.upper:.2f}]  {estimate_text(est, self.model)}  LOS {los_text(est)}  "
            f"{self.status}"
        )


def run_sprt(
    scores: Sequence[float],
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    max_pairs: int | None = None,
    model: Model = "logistic",
) -> SPRT:
    """Feed ``scores`` to a new `SPRT` until it decides; returns the test."""
    test = SPRT(elo0, elo1, alpha, beta, max_pairs, model)
    test.extend(scores)
    return test


class ScoreSPRT(SPRT):
    """GSPRT on samples scoring ``k / steps`` (k = 0..steps), fed one at a time: the `SPRT`
    of duplicate pairs generalised to a finer score, such as a table comparison's deck set
    (the mean of its seats' pair scores, `arena.tournament.compare_tables`). The LLR is
    `llr_scores` on the counts per value (fishtest's regularization of empty cells
    included); in the normalized model a sample stands for ``games`` games. ``status``,
    the bounds and the first decision being final are as in `SPRT`; ``pairs`` counts samples
    (the name the comparison's report reads)."""

    def __init__(
        self,
        elo0: float,
        elo1: float,
        alpha: float = 0.05,
        beta: float = 0.05,
        max_pairs: int | None = None,
        model: Model = "logistic",
        *,
        steps: int,
        games: float,
        sample: str = "sample",
    ) -> None:
        super().__init__(elo0, elo1, alpha, beta, max_pairs, model)
        if steps < 1 or not games > 0:
            raise ValueError(f"need steps >= 1 and games > 0, got {steps}, {games}")
        self.steps, self.games, self.sample = steps, float(games), sample
        self.values = np.arange(steps + 1) / steps
        self._counts = [0] * (steps + 1)

    @property
    def counts(self) -> tuple[int, ...]:
        """Samples per score ``k / steps``, k = 0..steps."""
        return tuple(self._counts)

    @property
    def tally(self) -> tuple[int, int, int]:
        """Samples scoring below 1/2, exactly 1/2 and above: NEW behind, even, ahead."""
        half = self.steps / 2
        below = sum(c for k, c in enumerate(self._counts) if k < half)
        even = sum(c for k, c in enumerate(self._counts) if k == half)
        return below, even, self.pairs - below - even

    def add(self, score: float) -> Status:
        """Record one sample's score (a multiple of ``1 / steps`` in [0, 1]) and return the status."""
        k = round(float(score) * self.steps)
        if not 0 <= k <= self.steps or abs(k - float(score) * self.steps) > 1e-9:
            raise ValueError(f"a score must be a multiple of 1/{self.steps} in [0, 1], got {score!r}")
        self._counts[k] += 1
        return self._record(
            float(llr_scores(self._counts, self.values, self.elo0, self.elo1, model=self.model, games=self.games))
        )

    def estimate(self, confidence: float = 0.95) -> EloEstimate:
        """The mean score's Elo with its interval, LOS and normalized Elo (`score_estimate`)."""
        return score_estimate(self._counts, self.values, self.games, confidence, self.sample)

    def summary(self) -> dict[str, object]:
        """`SPRT.summary`'s keys (``losses``, ``halves``, ``wins`` from `tally`), with the mean score."""
        return {**super().summary(), "mean_score": self.estimate().mean}
