"""Planning a comparison: the GSPRT's operating characteristics, by simulation. Pure (numpy only, no I/O).

Before ``arena compare`` plays, a user should know what its test can deliver: how often it
accepts H1 when NEW's true gain is ``elo0`` (the false-positive rate, meant to be at most
about ``alpha``) and when it is ``elo1`` (the power, meant to be about ``1 - beta``), how
many pairs it takes, and how often it ends undecided at the cap. Wald's bounds promise the
error rates only roughly (the GSPRT estimates the outcome distribution as it goes, the LLR
overshoots its bounds, and a cap cuts tests short), so they are simulated: many tests at
once, each fed pair scores drawn at random, each stopped exactly where `arena.stats.sprt.SPRT`
would stop it (the same LLR, the same bounds, the same cap, checked after every pair).

**What a true gain means.** A hypothesis fixes one number, not the whole distribution of a
pair's score on ``{0, 1/2, 1}``: the mean score (``model="logistic"``: Elo) or the t-value
``(mean - 1/2) / sd`` (``model="normalized"``: normalized Elo, ``nelo = t / sqrt(2) *
800 / ln 10`` per `arena.stats.sprt`). The other free number is the *split share*: the share of
pairs that split 1-1 (each side won one match), which depends on the agents and on how much
the deal decides. `trinomial` holds it fixed and solves for the rest. With the normalized
model the test measures the gain in units of the pair score's spread, so its operating
characteristics barely depend on the split share; with the logistic model they depend on it
strongly (the spread sets how many pairs a gain of ``elo1`` Elo takes to show).

**The LLR, fast.** For three outcomes the constrained maximum-likelihood fits of
`arena.stats.sprt` reduce to one dimension. Write ``s = p0 + p1`` (the pairs not split) and
``d = p1 - p0``, so the mean score is ``(1 + d) / 2`` and the variance ``(s - d**2) / 4``.
A mean constraint fixes ``d``; the likelihood ``q0 log(s - d) + q1 log(s + d) + qh log(1 - s)``
is then maximised at the larger root of ``s**2 - (A + B d) s - (qh d**2 - B d) = 0`` with
``A = q0 + q1``, ``B = q1 - q0``. A t-value constraint ``t`` gives ``d = tau sqrt(s)`` with
``tau = t / sqrt(1 + t**2)``; in ``u = sqrt(s)`` the log-likelihood ``(q0 + q1) log u +
q0 log(u - tau) + q1 log(u + tau) + qh log(1 - u**2)`` is strictly concave on
``(|tau|, 1)``, and a safeguarded Newton iteration finds its maximum. Counts are regularised
as `arena.stats.sprt.llr_pairs` does (an empty cell counts 1e-3), and `llr` equals it to rounding.

**Randomness.** The pair scores of test ``r`` come from uniform numbers drawn in blocks of
`BLOCK` pairs from ``numpy.random.default_rng([seed, block])``, shared by every true gain and
split share of one call (common random numbers): the figures are a function of the seed,
and two settings compared on one seed differ by their effect, not by the luck of the draw.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .sprt import NELO_PER_NT, REGULARIZATION, Model, logistic_score, sprt_bounds

DEFAULT_SPLIT = 0.7  # share of pairs split 1-1 between close agents (measured: 0.53 to 0.94)
DEFAULT_RUNS = 1000  # simulated tests per true gain (fewer when each takes many pairs: `auto_runs`)
MIN_RUNS = 200
BUDGET = 16_000_000  # simulated pairs a plan may take at most (about 2 s): `auto_runs`
DEFAULT_SEED = 1
SENSITIVITY_SPLITS = (0.5, 0.9)  # other split shares shown by a plan
BLOCK = 512  # pairs drawn at a time per test
_CHUNK = 1 << 15  # LLRs computed at a time (fits in cache; much faster than one large array)
_NEWTON_MAX = 100


# -- outcome distributions -------------------------------------------------------------------------


def unit(model: Model) -> str:
    """The unit of the bounds: ``nElo`` (normalized) or ``Elo``."""
    return "nElo" if model == "normalized" else "Elo"


def tau(elo: float) -> float:
    """The normalized model's ``tau = t / sqrt(1 + t**2)`` (``d = tau sqrt(s)``) for a pair's
    t-value ``t = sqrt(2) nelo / (800 / ln 10)``."""
    t = math.sqrt(2.0) * elo / NELO_PER_NT
    return t / math.sqrt(1.0 + t * t)


def trinomial(elo: float, split: float, model: Model) -> np.ndarray:
    """Probabilities of pair scores 0, 1/2, 1 for a true gain ``elo`` (Elo or normalized Elo,
    by ``model``) when a share ``split`` of the pairs split 1-1. ValueError if no such
    distribution exists (a logistic gain too large for that many split pairs)."""
    if not 0.0 <= split < 1.0:
        raise ValueError(f"the split share must be in [0, 1), got {split}")
    s = 1.0 - split
    if model == "logistic":
        d = 2.0 * logistic_score(elo) - 1.0
    elif model == "normalized":
        d = tau(elo) * math.sqrt(s)
    else:
        raise ValueError(f"unknown Elo model {model!r} (use 'logistic' or 'normalized')")
    if abs(d) > s:
        raise ValueError(f"a gain of {elo:g} {unit(model)} is impossible with {100 * split:g}% of pairs split")
    return np.array([(s - d) / 2.0, split, (s + d) / 2.0])


# -- the LLR of many count vectors -----------------------------------------------------------------


def _fit_mean(c0: np.ndarray, ch: np.ndarray, c1: np.ndarray, n: np.ndarray, d: float) -> tuple[np.ndarray, ...]:
    """``(2 p0, ph, 2 p1)`` of the best fit with ``p1 - p0 = d``: the quadratic's larger root."""
    a, b, qh = (c0 + c1) / n, (c1 - c0) / n, ch / n
    lin = a + b * d
    root = np.sqrt(lin * lin + 4.0 * (qh * d * d - b * d))
    s = 0.5 * (lin + root)
    ph = 2.0 * qh * (1.0 - d * d) / (2.0 - lin + root)  # 1 - s without cancellation
    return s - d, ph, s + d


def _fit_t(c0: np.ndarray, ch: np.ndarray, c1: np.ndarray, n: np.ndarray, tau_: float) -> np.ndarray:
    """``u = sqrt(p0 + p1)`` of the best fit with ``p1 - p0 = tau u``: safeguarded Newton on
    the derivative of the concave log-likelihood, from the unconstrained fit (the answer when
    ``tau = 0``). A step below 1e-7 ends it: Newton converges quadratically, so the result is
    then within about 1e-13, and the log-likelihood's error is of the order of its square."""
    x = np.sqrt((c0 + c1) / n)
    if tau_ == 0.0:
        return x
    lo = np.full(c0.shape, abs(tau_))
    hi = np.ones(c0.shape)
    x = np.where((x > lo) & (x < hi), x, 0.5 * (lo + hi))
    todo = np.arange(x.size)  # those still moving; all of them for the first two steps (no gathering)
    for k in range(_NEWTON_MAX):
        whole = k < 2
        if whole:
            u, a0, a1, ah, lo_t, hi_t = x, c0, c1, ch, lo, hi
        else:
            u, a0, a1, ah, lo_t, hi_t = x[todo], c0[todo], c1[todo], ch[todo], lo[todo], hi[todo]
        inv, m, p, w = 1.0 / u, 1.0 / (u - tau_), 1.0 / (u + tau_), 1.0 / (1.0 - u * u)
        f = a0 * (inv + m) + a1 * (inv + p) - 2.0 * ah * u * w
        fp = a0 * (inv * inv + m * m) + a1 * (inv * inv + p * p) + 2.0 * ah * (1.0 + u * u) * w * w
        lo_t = np.where(f > 0, u, lo_t)
        hi_t = np.where(f < 0, u, hi_t)
        un = u + f / fp
        un = np.where((un >= lo_t) & (un <= hi_t), un, 0.5 * (lo_t + hi_t))
        moving = np.abs(un - u) > 1e-7
        if whole:
            x, lo, hi = un, lo_t, hi_t
            todo = np.flatnonzero(moving)
        else:
            x[todo], lo[todo], hi[todo] = un, lo_t, hi_t
            todo = todo[moving]
        if todo.size == 0:
            break
    return x


def llr(counts: npt.ArrayLike, elo0: float, elo1: float, model: Model = "logistic") -> np.ndarray:
    """The GSPRT log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for pair counts
    ``[n0, n1/2, n1]`` on the last axis, as `arena.stats.sprt.llr_pairs` computes it (regularised),
    for arrays of any shape; much faster than it on many counts."""
    c = np.asarray(counts, dtype=float)
    if c.ndim == 0 or c.shape[-1] != 3:
        raise ValueError(f"expected counts with last axis of length 3, got shape {c.shape}")
    flat = c.reshape(-1, 3)
    out = np.empty(len(flat))
    if model == "logistic":
        d0, d1 = (2.0 * logistic_score(e) - 1.0 for e in (elo0, elo1))
    elif model == "normalized":
        t0, t1 = tau(elo0), tau(elo1)
    else:
        raise ValueError(f"unknown Elo model {model!r} (use 'logistic' or 'normalized')")
    for i in range(0, len(flat), _CHUNK):
        part = flat[i : i + _CHUNK]
        part = np.where(part == 0, REGULARIZATION, part)
        c0, ch, c1 = part[:, 0], part[:, 1], part[:, 2]
        n = c0 + ch + c1
        if model == "logistic":
            f0, f1 = _fit_mean(c0, ch, c1, n, d0), _fit_mean(c0, ch, c1, n, d1)
        else:
            u0, u1 = _fit_t(c0, ch, c1, n, t0), _fit_t(c0, ch, c1, n, t1)
            f0 = (u0 * (u0 - t0), (1.0 - u0) * (1.0 + u0), u0 * (u0 + t0))
            f1 = (u1 * (u1 - t1), (1.0 - u1) * (1.0 + u1), u1 * (u1 + t1))
        out[i : i + _CHUNK] = c0 * np.log(f1[0] / f0[0]) + ch * np.log(f1[1] / f0[1]) + c1 * np.log(f1[2] / f0[2])
    empty = np.sum(c, axis=-1) == 0
    return np.where(empty, 0.0, out.reshape(c.shape[:-1]))


# -- simulated tests -------------------------------------------------------------------------------


def uniforms(seed: int, block: int, runs: int) -> np.ndarray:
    """The uniform numbers of pairs ``block * BLOCK`` to ``(block + 1) * BLOCK - 1`` of each of
    ``runs`` tests, shape ``(runs, BLOCK)``: a pair scores 0 below ``p0``, 1/2 below ``p0``
    plus the split share, else 1."""
    return np.random.default_rng([seed, block]).random((runs, BLOCK))


@dataclasses.dataclass(frozen=True)
class Simulation:
    """Simulated tests at one true gain: each test's decision (+1 H1, -1 H0, 0 the cap) and
    the pairs it took."""

    elo: float
    split: float
    decision: np.ndarray
    pairs: np.ndarray

    @property
    def h1(self) -> float:
        return float(np.mean(self.decision == 1))

    @property
    def h0(self) -> float:
        return float(np.mean(self.decision == -1))

    @property
    def cap(self) -> float:
        return float(np.mean(self.decision == 0))

    @property
    def mean_pairs(self) -> float:
        return float(np.mean(self.pairs))

    def quantile_pairs(self, q: float) -> float:
        return float(np.quantile(self.pairs, q))


def simulate(
    gains: Sequence[tuple[float, float]],
    *,
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_pairs: int,
    model: Model,
    runs: int = DEFAULT_RUNS,
    seed: int = DEFAULT_SEED,
) -> list[Simulation]:
    """``runs`` tests of ``elo0`` against ``elo1`` at each ``(true gain, split share)`` of
    ``gains``, each stopped where `arena.stats.sprt.SPRT` stops: the first pair whose LLR reaches a
    Wald bound, else ``max_pairs``. Seeded, vectorised."""
    if not (math.isfinite(elo0) and math.isfinite(elo1) and elo0 < elo1):
        raise ValueError(f"need finite elo0 < elo1, got {elo0}, {elo1}")
    if max_pairs < 1 or runs < 1:
        raise ValueError(f"max_pairs and runs must be positive, got {max_pairs}, {runs}")
    lower, upper = sprt_bounds(alpha, beta)
    probs = np.array([trinomial(e, h, model) for e, h in gains]).reshape(-1, 3)
    cut0, cut1 = probs[:, 0], probs[:, 0] + probs[:, 1]
    scenario = np.repeat(np.arange(len(probs)), runs)
    run = np.tile(np.arange(runs), len(probs))
    decision = np.zeros(scenario.size, dtype=np.int8)
    stop = np.full(scenario.size, max_pairs)
    counts = np.zeros((scenario.size, 3))
    active = np.arange(scenario.size)
    block = 0
    while block * BLOCK < max_pairs and active.size:
        steps = min(BLOCK, max_pairs - block * BLOCK)
        u = uniforms(seed, block, runs)[:, :steps]
        for part in np.array_split(active, max(1, active.size * steps // 200_000)):
            ua = u[run[part]]
            out = (ua >= cut0[scenario[part], None]).astype(np.int8) + (ua >= cut1[scenario[part], None])
            cum = counts[part][:, None, :] + np.cumsum(out[..., None] == np.arange(3), axis=1)
            value = llr(cum, elo0, elo1, model)
            up, down = value >= upper, value <= lower
            hit = up | down
            done = hit.any(axis=1)
            first = hit.argmax(axis=1)[done]
            rows = part[done]
            decision[rows] = np.where(up[done, first], 1, -1)
            stop[rows] = block * BLOCK + first + 1
            counts[part] = cum[:, -1, :]
        active = active[decision[active] == 0]
        block += 1
    return [
        Simulation(float(e), float(h), decision[k * runs : (k + 1) * runs], stop[k * runs : (k + 1) * runs])
        for k, (e, h) in enumerate(gains)
    ]


def t_value(elo: float, split: float, model: Model) -> float:
    """A pair's t-value ``(mean - 1/2) / sd`` for a true gain ``elo`` at ``split``."""
    p0, _, p1 = trinomial(elo, split, model)
    d, s = p1 - p0, p0 + p1
    return d / math.sqrt(s - d * d) if s > d * d else math.copysign(math.inf, d)


def auto_runs(elo0: float, elo1: float, alpha: float, beta: float, max_pairs: int, model: Model, split: float) -> int:
    """Tests per true gain for a plan: `DEFAULT_RUNS`, or fewer (down to `MIN_RUNS`, in
    hundreds) when the test takes so many pairs that they would exceed `BUDGET`. The pairs are
    estimated by Brownian motion: midway, an LLR with no drift and a variance ``(t1 - t0)**2``
    per pair leaves ``(lower, upper)`` after ``-lower * upper / (t1 - t0)**2`` pairs on average."""
    lower, upper = sprt_bounds(alpha, beta)
    step = (t_value(elo1, split, model) - t_value(elo0, split, model)) ** 2
    pairs = 3 * min(max_pairs, -lower * upper / step if step > 0 else math.inf)
    runs = int(BUDGET / max(pairs, 1.0)) // 100 * 100
    return max(MIN_RUNS, min(DEFAULT_RUNS, runs))


# -- a plan ----------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Plan:
    """A test's simulated operating characteristics: at ``elo0``, midway and ``elo1`` for the
    assumed split share, and (if asked for) at ``elo0`` and ``elo1`` for other split shares."""

    elo0: float
    elo1: float
    alpha: float
    beta: float
    max_pairs: int
    model: Model
    split: float
    runs: int
    seed: int
    points: tuple[Simulation, Simulation, Simulation]
    others: tuple[Simulation, ...] = ()


def _possible(elo: float, split: float, model: Model) -> bool:
    try:
        trinomial(elo, split, model)
    except ValueError:
        return False
    return True


def make_plan(
    elo0: float,
    elo1: float,
    alpha: float,
    beta: float,
    max_pairs: int,
    model: Model,
    *,
    split: float = DEFAULT_SPLIT,
    runs: int | None = None,
    seed: int = DEFAULT_SEED,
    others: Sequence[float] = (),
) -> Plan:
    """Simulate a test at ``elo0``, midway and ``elo1`` (and at ``elo0``, ``elo1`` for each
    split share in ``others`` that can hold those gains), ``runs`` times each (default:
    `auto_runs`). The three main figures do not depend on ``others``."""
    if runs is None:
        runs = auto_runs(elo0, elo1, alpha, beta, max_pairs, model, split)
    kw = dict(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, max_pairs=max_pairs, model=model, runs=runs, seed=seed)
    mid = (elo0 + elo1) / 2.0
    a, b, c = simulate([(elo0, split), (mid, split), (elo1, split)], **kw)
    others = [h for h in others if _possible(elo0, h, model) and _possible(elo1, h, model)]
    more = simulate([(e, h) for h in others for e in (elo0, elo1)], **kw) if others else []
    return Plan(elo0, elo1, alpha, beta, max_pairs, model, split, runs, seed, (a, b, c), tuple(more))


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def plan_line(plan: Plan) -> str:
    """The plan in one line (a run's header)."""
    a, m, b = plan.points
    return (
        f"planned (simulated, {100 * plan.split:g}% of pairs split): P(H1) {_pct(a.h1)} at elo0, {_pct(b.h1)} at "
        f"elo1; mean pairs {a.mean_pairs:,.0f} / {m.mean_pairs:,.0f} / {b.mean_pairs:,.0f} at elo0 / midway / "
        f"elo1; ends at the cap {_pct(max(a.cap, m.cap, b.cap))} of the time at most"
    )


def plan_text(plan: Plan) -> str:
    """The plan as a small table, with its assumptions and the split-share sensitivity."""
    u = unit(plan.model)
    rows = [("elo0", plan.points[0]), ("midway", plan.points[1]), ("elo1", plan.points[2])]
    lines = [
        f"plan: GSPRT on {plan.model} Elo, H0 elo0={plan.elo0:g} {u} against H1 elo1={plan.elo1:g} {u}, "
        f"alpha={plan.alpha:g}, beta={plan.beta:g}, at most {plan.max_pairs:,} pairs",
        f"simulated: {plan.runs:,} tests per true gain (seed {plan.seed}), assuming {100 * plan.split:g}% of pairs "
        "split 1-1 (--split)",
        "",
        f"{'true gain':<18}  {'P(H1)':>6}  {'P(H0)':>6}  {'P(cap)':>6}  {'mean pairs':>10}  {'90% within':>10}",
    ]
    for name, s in rows:
        label = f"{name} = {s.elo:g} {u}"
        lines.append(
            f"{label:<18}  {_pct(s.h1):>6}  {_pct(s.h0):>6}  {_pct(s.cap):>6}  {s.mean_pairs:>10,.0f}  "
            f"{s.quantile_pairs(0.9):>10,.0f}"
        )
    if plan.others:
        lines.append("")
        what = "barely depends on it" if plan.model == "normalized" else "depends on it"
        lines.append(f"other split shares (the {plan.model} model {what}):")
        for k in range(0, len(plan.others), 2):
            lo, hi = plan.others[k], plan.others[k + 1]
            lines.append(
                f"  {100 * lo.split:g}% split: P(H1) {_pct(lo.h1)} at elo0, {_pct(hi.h1)} at elo1; mean pairs "
                f"{lo.mean_pairs:,.0f} / {hi.mean_pairs:,.0f}; P(cap) {_pct(max(lo.cap, hi.cap))} at most"
            )
    return "\n".join(lines)
