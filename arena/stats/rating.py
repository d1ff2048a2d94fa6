"""Ratings on the Elo scale with error bars, from match results. Pure (no I/O).

**Model.** Bradley-Terry on the Elo scale: agent i beats agent j with probability
``1 / (1 + 10 ** (-(r_i - r_j) / 400))``. Internally a rating is a natural log-odds
``theta = r / ELO`` with ``ELO = 400 / ln 10`` (about 173.7 Elo per unit). The ratings of
all agents are fitted jointly by maximum likelihood (a posteriori, with the prior below)
on the aggregated wins matrix
``W[i, j]`` (wins of i over j), by Newton's method with a backtracking line search, so the
order of the matches does not matter. Matches without a result are left out.

**Prior.** BayesElo-style virtual draws: each agent is credited with ``prior`` virtual
draws (half a win and half a loss each) against the pool mean, that is the log-posterior
gets ``prior * (log s(u_i) + log s(-u_i)) / 2`` with ``u_i = theta_i - mean(theta)`` and
``s`` the logistic function. The term is a ridge on the centred ratings: it shrinks a
little, keeps the model translation invariant, and keeps every rating finite when the
comparison graph is not connected or an agent won or lost everything. ``prior=0`` is
plain maximum likelihood, which only exists when the "beat" graph is strongly connected
(every agent reaches every other through a chain of wins); otherwise `solve` raises.

**Location and errors.** Ratings are only defined up to a common shift: they are
reported with mean 0, or with one named agent fixed at ``anchor_elo``. When the pool is
split, "mean 0" is over the main pool (the strictly largest connected group of agents that
played), so that a stray group's uncertainty does not spread to everyone. The Fisher
information ``H`` (the negative log-posterior's Hessian) has the null vector ``1``; its
pseudo-inverse ``H+`` is the covariance of the mean-0 ratings (computed as
``inv(H + a 11'/n) - 11'/(a n)``). Measuring from a reference with weights ``m`` (``e_k``
for an anchor, uniform over the main pool otherwise) is the linear map ``L = I - 1 m'``,
covariance ``L H+ L'``: the anchor gets SE 0, and a difference's variance is the same
whatever the reference. 95% intervals are ``elo +- 1.96 se``; the standard error of a
difference is ``sqrt(c_ii + c_jj - 2 c_ij)``.

The analytical errors treat matches as independent. In duplicate pairs (the same decks,
seats swapped) the two matches of a pair are negatively correlated, so these errors are
conservative; `arena.stats.bootstrap` resamples whole pairs (within each pairing) and
measures it.

**Order.** `order_z` says how sure the results are of two agents' order, by the
likelihood ratio of a tie; the ladder's scheduler uses it where a rating is one-sided.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from .bootstrap import Bootstrap

Z95 = 1.959963984540054
ELO = 400.0 / math.log(10.0)  # Elo points per unit of natural log-odds
DEFAULT_PRIOR = 1.0  # virtual draws per agent against the pool mean
DEFAULT_MIN_GAMES = 10
DEFAULT_MAX_SE = 100.0

Row = Mapping[str, Any]


# -- helpers -----------------------------------------------------------------------------------


def expected_score(diff: float | np.ndarray) -> float | np.ndarray:
    """P(win) for an Elo difference ``diff`` under the model."""
    return 1.0 / (1.0 + 10.0 ** (-np.asarray(diff, dtype=float) / 400.0))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))  # no overflow for large |x|


_normal_cdf = np.vectorize(statistics.NormalDist().cdf, otypes=[float])


def normal_cdf(x: float | np.ndarray) -> np.ndarray:
    """The standard normal distribution function (the standard library's), elementwise."""
    return _normal_cdf(np.asarray(x, dtype=float))


def winner_index(value: Any) -> int | None:
    """A row's winner seat (0 or 1), or None for no result (None or NaN from pandas)."""
    if value is None:
        return None
    f = float(value)
    if math.isnan(f):
        return None
    if f not in (0.0, 1.0):
        raise ValueError(f"winner must be 0, 1 or None, not {value!r}")
    return int(f)


def percent(p: float, *, exact_ends: bool = True) -> str:
    """A share as a percentage to one decimal that never rounds to a false 0% or 100%:
    79/80 is "98.8%", 1999/2000 "> 99.9%". Only an exact 0 or 1 is "0%" or "100%", and
    not even that with ``exact_ends=False`` (a probability from a normal approximation)."""
    if p is None or math.isnan(p):
        return "-"
    if exact_ends and p in (0.0, 1.0):
        return f"{100 * p:.0f}%"
    text = f"{100 * p:.1f}"
    if text == "100.0" or p >= 1.0:
        return "> 99.9%"
    if text == "0.0" or p <= 0.0:
        return "< 0.1%"
    return text + "%"


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def all_names(rows: Sequence[Row], names: Sequence[str]) -> list[str]:
    """``names`` in order, then any other agent seen in the rows, sorted."""
    out = list(dict.fromkeys(names))
    known = set(out)
    seen = {r["seat0"] for r in rows} | {r["seat1"] for r in rows}
    return out + sorted(seen - known)


def _closure(adj: np.ndarray) -> np.ndarray:
    """Reachability (reflexive, transitive closure) of a boolean adjacency matrix."""
    n = len(adj)
    reach = adj | np.eye(n, dtype=bool)
    while True:
        f = reach.astype(np.float32)
        nxt = (f @ f) > 0
        if np.array_equal(nxt, reach):
            return reach
        reach = nxt


def _labels(same: np.ndarray) -> np.ndarray:
    """Component labels (the lowest member's index) from an equivalence matrix."""
    return np.argmax(same, axis=1) if len(same) else np.zeros(0, dtype=int)


def components(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels of the connected components of the comparison graph (any game between i
    and j) and of the strongly connected components of the "beat" graph (i -> j when i
    won at least once against j). A label is the lowest index in the component."""
    W = np.asarray(W, dtype=float)
    played = (W + W.T) > 0
    weak = _labels(_closure(played))
    reach = _closure(W > 0)
    strong = _labels(reach & reach.T)
    return weak, strong


def _prepare(W: np.ndarray) -> np.ndarray:
    W = np.array(W, dtype=float)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"the wins matrix must be square, not {W.shape}")
    if (W < 0).any() or not np.isfinite(W).all():
        raise ValueError("the wins matrix must be finite and non-negative")
    np.fill_diagonal(W, 0.0)
    return W


# -- aggregation -------------------------------------------------------------------------------


def aggregate_indices(winners: np.ndarray, losers: np.ndarray, n: int, weights: np.ndarray | None = None) -> np.ndarray:
    """The wins matrix ``W[i, j]`` (wins of i over j) from arrays of winner and loser
    indices in ``range(n)``; integer counts, or float with ``weights``. Self-play is
    dropped."""
    w = np.asarray(winners, dtype=np.int64).ravel()
    lo = np.asarray(losers, dtype=np.int64).ravel()
    if w.shape != lo.shape:
        raise ValueError("winners and losers must have the same length")
    if w.size and (min(w.min(), lo.min()) < 0 or max(w.max(), lo.max()) >= n):
        raise ValueError(f"agent indices must lie in range({n})")
    W = np.bincount(w * n + lo, weights=weights, minlength=n * n).reshape(n, n)
    np.fill_diagonal(W, 0)
    return W


def decided(rows: Iterable[Row], names: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Winner and loser index arrays of the rows with a result, and the agent names
    (``names`` first, then any others seen, sorted)."""
    rows = list(rows)
    allnames = all_names(rows, names)
    index = {name: k for k, name in enumerate(allnames)}
    pairs = []
    for r in rows:
        s = winner_index(r["winner"])
        if s is not None:
            seats = (r["seat0"], r["seat1"])
            pairs.append((index[seats[s]], index[seats[1 - s]]))
    arr = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1], allnames


def aggregate(rows: Iterable[Row], names: Sequence[str] = ()) -> tuple[np.ndarray, list[str]]:
    """The wins matrix from match rows (keys ``seat0``, ``seat1``, ``winner``) and the
    agent names its rows and columns stand for."""
    winners, losers, allnames = decided(rows, names)
    return aggregate_indices(winners, losers, len(allnames)), allnames


def aggregate_counts(rows: Iterable[Row], names: Sequence[str] = ()) -> tuple[np.ndarray, list[str]]:
    """The wins matrix from counted results: rows with ``seat0``, ``seat1``, ``winner``
    and ``count``, how many matches ended that way (what `Store.result_counts` gives, one
    row per outcome instead of one per match); the same matrix `aggregate` makes of the
    matches themselves."""
    rows = list(rows)
    allnames = all_names(rows, names)
    index = {name: k for k, name in enumerate(allnames)}
    won, lost, n = [], [], []
    for r in rows:
        s = winner_index(r["winner"])
        if s is not None:
            seats = (r["seat0"], r["seat1"])
            won.append(index[seats[s]])
            lost.append(index[seats[1 - s]])
            n.append(int(r["count"]))
    W = aggregate_indices(np.array(won, dtype=np.int64), np.array(lost, dtype=np.int64), len(allnames),
                          weights=np.array(n, dtype=float))  # fmt: skip
    return np.rint(W).astype(np.int64), allnames


# -- the fit -----------------------------------------------------------------------------------


def prior_log_density(theta: np.ndarray, prior: float) -> float:
    """The prior's log density at ``theta``: ``prior`` virtual draws per agent against the
    pool mean (shared by every model of `arena.stats`)."""
    u = theta - theta.mean()
    return -0.5 * prior * float((np.logaddexp(0.0, -u) + np.logaddexp(0.0, u)).sum())


def prior_gradient_information(theta: np.ndarray, prior: float) -> tuple[np.ndarray, np.ndarray]:
    """The prior's gradient and the Hessian of its negative at ``theta``."""
    n = len(theta)
    s = _sigmoid(theta - theta.mean())
    gu = prior * (0.5 - s)
    dv = prior * s * (1.0 - s)  # C diag(dv) C with C the centring matrix
    return gu - gu.mean(), np.diag(dv) - (dv[:, None] + dv[None, :]) / n + dv.sum() / n**2


def _log_posterior(theta: np.ndarray, W: np.ndarray, prior: float) -> float:
    d = theta[:, None] - theta[None, :]
    ll = -float((W * np.logaddexp(0.0, -d)).sum())
    if prior:
        ll += prior_log_density(theta, prior)
    return ll


def _gradient_hessian(
    theta: np.ndarray, W: np.ndarray, N: np.ndarray, wins: np.ndarray, prior: float
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the log-posterior and the Hessian of its negative (the information),
    in natural units."""
    n = len(theta)
    P = _sigmoid(theta[:, None] - theta[None, :])  # P[i, j] = P(i beats j)
    g = wins - (N * P).sum(axis=1)
    Q = N * P * P.T
    H = -Q
    H[np.diag_indices(n)] += Q.sum(axis=1)
    if prior:
        gp, Hp = prior_gradient_information(theta, prior)
        g = g + gp
        H += Hp
    return g, H


def check_identifiable(W: np.ndarray) -> None:
    """Raise ValueError when maximum-likelihood ratings (no prior) do not exist: some
    agents never both won and lost against the rest (including unconnected pools)."""
    W = _prepare(W)
    if len(W) < 2:
        return
    _, strong = components(W)
    if (strong != 0).any():
        raise ValueError(
            "maximum-likelihood ratings do not exist: the pool is not connected by wins both ways "
            "(an agent or group won or lost everything, or the pool is split); use a prior > 0"
        )


def solve(
    W: np.ndarray, prior: float = DEFAULT_PRIOR, start: np.ndarray | None = None, *, tol: float = 1e-10,
    max_iter: int = 200,
) -> np.ndarray:  # fmt: skip
    """Joint maximum-a-posteriori Elo ratings (mean 0) from the wins matrix ``W``, by
    Newton's method; ``start`` (Elo) warm-starts it."""
    W = _prepare(W)
    n = len(W)
    if prior < 0:
        raise ValueError("the prior must be >= 0")
    if n == 0:
        return np.zeros(0)
    if prior == 0:
        check_identifiable(W)
    theta = np.zeros(n) if start is None else np.asarray(start, dtype=float) / ELO
    N = W + W.T
    wins = W.sum(axis=1)
    theta = newton(theta - theta.mean(), lambda t: _log_posterior(t, W, prior),
                   lambda t: _gradient_hessian(t, W, N, wins, prior), tol=tol, max_iter=max_iter)  # fmt: skip
    if theta is None:
        raise RuntimeError(f"the rating fit did not converge in {max_iter} iterations")
    return theta * ELO


def newton(
    theta: np.ndarray,
    log_posterior: Callable[[np.ndarray], float],
    gradient_hessian: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    *,
    tol: float = 1e-10,
    max_iter: int = 200,
    give_up: Callable[[np.ndarray], bool] | None = None,
) -> np.ndarray | None:
    """Maximise a log-posterior that a common shift of ``theta`` leaves unchanged (every
    model here), from ``theta`` (mean 0), by Newton's method with a backtracking line
    search; the shift is fixed by a gauge term and every step kept at mean 0. The maximum
    (natural units), or None without convergence in ``max_iter`` steps or once
    ``give_up(theta)`` says so (a diverging fit)."""
    n = len(theta)
    gauge = np.full((n, n), 1.0 / n)
    f = log_posterior(theta)
    for _ in range(max_iter):
        g, H = gradient_hessian(theta)
        a = max(float(np.trace(H)) / n, 1e-12)
        delta = np.linalg.solve(H + a * gauge, g)
        delta -= delta.mean()
        step = 1.0
        while True:
            cand = theta + step * delta
            fc = log_posterior(cand)
            if fc >= f - 1e-13 * max(1.0, abs(f)) or step < 1e-8:
                break
            step *= 0.5
        moved = float(np.max(np.abs(cand - theta))) if n else 0.0
        theta, f = cand, fc
        if moved < tol:
            return theta
        if give_up is not None and give_up(theta):
            return None
    return None


def _log_posterior_many(theta: np.ndarray, W: np.ndarray, prior: float) -> np.ndarray:
    """`_log_posterior` of each row of ``theta`` (B, n) with its matrix of ``W`` (B, n, n)."""
    d = theta[:, :, None] - theta[:, None, :]
    ll = -(W * np.logaddexp(0.0, -d)).sum(axis=(1, 2))
    if prior:
        u = theta - theta.mean(axis=1, keepdims=True)
        ll -= 0.5 * prior * (np.logaddexp(0.0, -u) + np.logaddexp(0.0, u)).sum(axis=1)
    return ll


def solve_many(
    W: np.ndarray, prior: float = DEFAULT_PRIOR, start: np.ndarray | None = None, *, tol: float = 1e-10,
    max_iter: int = 200,
) -> np.ndarray:  # fmt: skip
    """`solve` for a stack of wins matrices ``W`` (B, n, n) at once (the bootstrap's
    replicates): Newton's method with a line search per matrix, vectorised over the stack.
    Returns the Elo ratings (B, n), mean 0; a row is NaN where `solve` would raise (no
    maximum with ``prior=0``, or no convergence). ``start`` (n,) warm-starts every row."""
    W = np.array(W, dtype=float)
    if W.ndim != 3 or W.shape[1] != W.shape[2]:
        raise ValueError(f"expected a stack of square wins matrices, not {W.shape}")
    B, n, _ = W.shape
    out = np.full((B, n), np.nan)
    if n == 0 or B == 0:
        return out[:, :0] if n == 0 else out
    W[:, np.arange(n), np.arange(n)] = 0.0
    ok = np.ones(B, dtype=bool)
    if prior == 0:
        for b in range(B):
            try:
                check_identifiable(W[b])
            except ValueError:
                ok[b] = False
    theta = np.zeros((B, n)) if start is None else np.tile(np.asarray(start, dtype=float) / ELO, (B, 1))
    theta -= theta.mean(axis=1, keepdims=True)
    N = W + W.transpose(0, 2, 1)
    wins = W.sum(axis=2)
    gauge = np.full((n, n), 1.0 / n)
    diag = np.arange(n)
    live = np.flatnonzero(ok)
    f = np.full(B, -np.inf)
    f[live] = _log_posterior_many(theta[live], W[live], prior)
    for _ in range(max_iter):
        if not live.size:
            break
        t, w, nn = theta[live], W[live], N[live]
        P = _sigmoid(t[:, :, None] - t[:, None, :])
        g = wins[live] - (nn * P).sum(axis=2)
        Q = nn * P * P.transpose(0, 2, 1)
        H = -Q
        H[:, diag, diag] += Q.sum(axis=2)
        if prior:
            s = _sigmoid(t - t.mean(axis=1, keepdims=True))
            gu = prior * (0.5 - s)
            g = g + gu - gu.mean(axis=1, keepdims=True)
            dv = prior * s * (1.0 - s)
            H[:, diag, diag] += dv
            H -= (dv[:, :, None] + dv[:, None, :]) / n
            H += dv.sum(axis=1)[:, None, None] / n**2
        a = np.maximum(np.trace(H, axis1=1, axis2=2) / n, 1e-12)
        delta = np.linalg.solve(H + a[:, None, None] * gauge, g[:, :, None])[:, :, 0]
        delta -= delta.mean(axis=1, keepdims=True)
        step = np.ones(len(live))
        todo = np.ones(len(live), dtype=bool)
        cand, fc = t.copy(), f[live].copy()
        while todo.any():
            k = np.flatnonzero(todo)
            c = t[k] + step[k, None] * delta[k]
            fk = _log_posterior_many(c, w[k], prior)
            done = (fk >= f[live][k] - 1e-13 * np.maximum(1.0, np.abs(f[live][k]))) | (step[k] < 1e-8)
            cand[k[done]], fc[k[done]] = c[done], fk[done]
            todo[k[done]] = False
            step[k[~done]] *= 0.5
        moved = np.max(np.abs(cand - t), axis=1)
        theta[live], f[live] = cand, fc
        finished = moved < tol
        out[live[finished]] = theta[live[finished]] * ELO
        live = live[~finished]
    return out


def information(W: np.ndarray, elo: np.ndarray, prior: float = DEFAULT_PRIOR) -> np.ndarray:
    """The Fisher information of the ratings at ``elo`` (per Elo squared), prior
    included. Singular: ``1`` is its null vector."""
    W = _prepare(W)
    theta = np.asarray(elo, dtype=float) / ELO
    _, H = _gradient_hessian(theta, W, W + W.T, W.sum(axis=1), prior)
    return H / ELO**2


def reference_weights(n: int, anchor: int | np.ndarray | None) -> np.ndarray:
    """Weights ``m`` (summing to 1) of the reference the ratings are measured from:
    uniform for None (mean 0), ``e_k`` for an agent index, or the given weights."""
    if anchor is None:
        return np.full(n, 1.0 / n)
    if isinstance(anchor, int | np.integer):
        m = np.zeros(n)
        m[int(anchor)] = 1.0
        return m
    m = np.asarray(anchor, dtype=float)
    return m / m.sum()


def covariance(
    W: np.ndarray, elo: np.ndarray, prior: float = DEFAULT_PRIOR, anchor: int | np.ndarray | None = None
) -> np.ndarray:
    """Covariance of the ratings (Elo squared) measured from a reference: mean 0 by
    default (the information's pseudo-inverse), agent index ``anchor`` held fixed, or the
    weighted mean ``anchor`` (weights) fixed. ``elo`` may be shifted: only differences
    enter."""
    W = _prepare(W)
    n = len(W)
    if n == 0:
        return np.zeros((0, 0))
    if prior == 0:
        check_identifiable(W)
    return covariance_of(information(W, elo, prior), anchor)


def covariance_of(H: np.ndarray, anchor: int | np.ndarray | None = None) -> np.ndarray:
    """The covariance (Elo squared) from an information matrix ``H`` (per Elo squared)
    whose null vector is ``1``: its pseudo-inverse (mean 0), or mapped to ``anchor`` (an
    agent index or reference weights) by ``L cov L'`` with ``L = I - 1 m'``."""
    n = len(H)
    a = max(float(np.trace(H)) / n, 1e-300)
    J = np.full((n, n), 1.0 / n)
    cov = np.linalg.inv(H + a * J) - J / a
    if anchor is not None:
        m = reference_weights(n, anchor)
        cm = cov @ m
        cov = cov - cm[:, None] - cm[None, :] + float(m @ cm)
    return 0.5 * (cov + cov.T)


def order_z(W: np.ndarray, i: int, j: int, prior: float = DEFAULT_PRIOR, elo: np.ndarray | None = None) -> float:
    """How sure the results are that agent ``i`` and agent ``j`` are in the fitted order,
    as a signed normal deviate: ``sign(r_i - r_j) sqrt(2 (lp - lp_tie))``, where ``lp`` is
    the maximum log-posterior and ``lp_tie`` its maximum with ``r_i = r_j`` (the signed
    root of the likelihood ratio of a tie). ``Phi(-|z|)`` is about the chance the order is
    wrong. Unlike the Wald ``(r_i - r_j) / se``, it stays right for a one-sided rating:
    an agent that lost all of 40 matches has a large SE held by the prior, yet tying it
    with the agents it lost to costs the likelihood of 40 losses, so ``|z|`` is large.
    ``elo``: the fitted ratings of ``W``, if known. Needs a prior > 0 or an identifiable
    ``W``."""
    W = _prepare(W)
    n = len(W)
    theta = (solve(W, prior) if elo is None else np.asarray(elo, dtype=float)) / ELO
    if i == j:
        return 0.0
    # the constrained fit: Newton in n - 1 free ratings, r_j following r_i (theta = A phi)
    keep = [k for k in range(n) if k != j]
    A = np.eye(n)[:, keep]
    A[j, keep.index(i)] = 1.0
    phi = theta[keep].copy()
    phi[keep.index(i)] = 0.5 * (theta[i] + theta[j])
    N, wins = W + W.T, W.sum(axis=1)
    gauge = np.full((n - 1, n - 1), 1.0 / (n - 1))
    f = _log_posterior(A @ phi, W, prior)
    for _ in range(200):
        g, H = _gradient_hessian(A @ phi, W, N, wins, prior)
        g, H = A.T @ g, A.T @ H @ A
        delta = np.linalg.solve(H + max(float(np.trace(H)) / (n - 1), 1e-12) * gauge, g)
        delta -= delta.mean()
        step = 1.0
        while True:
            cand = phi + step * delta
            fc = _log_posterior(A @ cand, W, prior)
            if fc >= f - 1e-13 * max(1.0, abs(f)) or step < 1e-8:
                break
            step *= 0.5
        moved = float(np.max(np.abs(cand - phi)))
        phi, f = cand, fc
        if moved < 1e-9:
            break
    deviance = max(2.0 * (_log_posterior(theta, W, prior) - f), 0.0)
    return math.copysign(math.sqrt(deviance), theta[i] - theta[j])


def _unique_largest(labels: np.ndarray, among: np.ndarray) -> int:
    """The label of the strictly largest group of ``labels[among]``, or -1 on a tie."""
    if not among.any():
        return -1
    sizes = np.bincount(labels[among], minlength=len(labels))
    top = np.flatnonzero(sizes == sizes.max())
    return int(top[0]) if len(top) == 1 else -1


def main_pool(W: np.ndarray) -> np.ndarray:
    """Boolean mask of the main pool: the strictly largest connected group of agents that
    played; every agent when there is no such group (a tie, or no games)."""
    W = _prepare(W)
    played = (W.sum(axis=0) + W.sum(axis=1)) > 0
    weak, _ = components(W)
    main = _unique_largest(weak, played)
    return weak == main if main >= 0 else np.ones(len(W), dtype=bool)


def disconnected_mask(W: np.ndarray) -> np.ndarray:
    """Agents that played but not in the main pool's connected group, when the pool is
    split (all of them when no group is strictly the largest)."""
    W = _prepare(W)
    games = W.sum(axis=0) + W.sum(axis=1)
    weak, _ = components(W)
    if len(np.unique(weak[games > 0])) <= 1:
        return np.zeros(len(W), dtype=bool)
    main = main_pool(W)
    return (games > 0) & (main.all() | ~main)


def rating_flags(W: np.ndarray, se: np.ndarray, min_games: int, max_se: float) -> list[str]:
    """A reason per agent why its rating is poorly determined, or ''."""
    n = len(W)
    if n == 0:
        return []
    wins, losses = W.sum(axis=1), W.sum(axis=0)
    games = wins + losses
    weak, strong = components(W)
    weak_size = np.bincount(weak, minlength=n)[weak]
    cut_off = disconnected_mask(W)
    # within each connected group, the agents outside its strictly largest group linked by
    # wins both ways (a strongly connected component) are placed by the prior alone
    main_strong = {int(c): _unique_largest(strong, weak == c) for c in np.unique(weak)}
    out = []
    for i in range(n):
        why = []
        if games[i] == 0:
            why.append("no matches")
        else:
            if cut_off[i]:
                why.append(f"disconnected from the main pool (a group of {weak_size[i]})")
            if losses[i] == 0:
                why.append("won every match")
            elif wins[i] == 0:
                why.append("lost every match")
            elif strong[i] != main_strong[int(weak[i])]:
                why.append("rests on the prior (its group only won or only lost against the rest)")
            if games[i] < min_games:
                why.append(f"few matches ({games[i]:g})")
        if se[i] > max_se:
            why.append(f"large SE ({se[i]:.0f})")
        out.append("; ".join(why))
    return out


def open_sides(W: np.ndarray) -> list[str]:
    """Per agent, which end of its rating the results leave open: "above" when it (or the
    group it is linked to by wins both ways) only won against the others it is connected
    to, "below" when it only lost, "both" for a group that only won against some and only
    lost against others, else "". The agents of the largest such group (the ones `rating_flags`
    does not flag) are bounded. An open rating is held by the prior alone: no
    maximum-likelihood value exists, and resampling cannot bound it either, since every
    resample is as one-sided as the data (an agent that won 200-0 wins every resample)."""
    W = _prepare(W)
    wins, losses = W.sum(axis=1), W.sum(axis=0)
    weak, strong = components(W)
    main_strong = {int(c): _unique_largest(strong, weak == c) for c in np.unique(weak)}
    out = []
    for i in range(len(W)):
        if wins[i] + losses[i] == 0 or strong[i] == main_strong[int(weak[i])]:
            out.append("")
            continue
        group = strong == strong[i]
        rest = (weak == weak[i]) & ~group
        won, lost = W[group][:, rest].sum() > 0, W[rest][:, group].sum() > 0
        out.append("both" if won and lost else "above" if won else "below" if lost else "")
    return out


@dataclasses.dataclass(frozen=True)
class Ratings:
    """Fitted ratings. Arrays are indexed like ``names``; ``ci95`` is (n, 2): low, high."""

    names: list[str]
    elo: np.ndarray
    se: np.ndarray
    ci95: np.ndarray
    games: np.ndarray
    wins: np.ndarray
    losses: np.ndarray
    score: np.ndarray  # share of decided matches won (NaN without any)
    covariance: np.ndarray
    flags: list[str]
    wins_matrix: np.ndarray
    prior: float
    anchor: str | None
    anchor_elo: float
    reference: str = "mean 0"  # what the ratings are measured from, in words

    def index(self, name: str) -> int:
        return self.names.index(name)

    def se_diff(self, a: str, b: str) -> float:
        """Standard error of ``elo[a] - elo[b]``, from the covariance."""
        i, j = self.index(a), self.index(b)
        c = self.covariance
        return math.sqrt(max(c[i, i] + c[j, j] - 2 * c[i, j], 0.0))

    def diff(self, a: str, b: str) -> tuple[float, float, float, float]:
        """``(elo[a] - elo[b], its SE, 95% low, 95% high)``."""
        d = float(self.elo[self.index(a)] - self.elo[self.index(b)])
        se = self.se_diff(a, b)
        return d, se, d - Z95 * se, d + Z95 * se

    def better(self, a: str, b: str) -> bool:
        """True when the 95% interval of ``elo[a] - elo[b]`` lies above zero."""
        return self.diff(a, b)[2] > 0

    def to_frame(self) -> pd.DataFrame:
        """One row per agent, best first: agent, elo, se, ci_low, ci_high, games, wins,
        losses, score, flag."""
        df = pd.DataFrame(
            {
                "agent": self.names,
                "elo": self.elo,
                "se": self.se,
                "ci_low": self.ci95[:, 0] if len(self.names) else [],
                "ci_high": self.ci95[:, 1] if len(self.names) else [],
                "games": self.games.astype(int),
                "wins": self.wins.astype(int),
                "losses": self.losses.astype(int),
                "score": self.score,
                "flag": self.flags,
            }
        )
        return df.sort_values(["elo", "agent"], ascending=[False, True], kind="stable").reset_index(drop=True)

    def format_table(self) -> str:
        """A plain-text table, best first."""
        df = self.to_frame()
        w = max([5, *(len(n) for n in self.names)])
        head = f"{'#':>3}  {'agent':<{w}}  {'elo':>7}  {'95% interval':>17}  {'se':>6}  {'matches':>7}  {'score':>6}"
        lines = [f"{head}  flag"]
        for k, r in enumerate(df.itertuples(index=False), 1):
            interval = f"[{r.ci_low:.0f}, {r.ci_high:.0f}]"
            score = percent(r.score)
            cells = f"{k:>3}  {r.agent:<{w}}  {r.elo:>7.1f}  {interval:>17}  {r.se:>6.1f}  {r.games:>7}  {score:>6}"
            lines.append(f"{cells}  {r.flag}".rstrip())
        reference, _, model = self.reference.partition("; ")  # a table model adds its words
        model = model[:1].upper() + model[1:] if model else "Bradley-Terry"
        lines.append(f"{model} on the Elo scale, {reference}, prior {self.prior:g} virtual draw(s) per agent.")
        return "\n".join(lines)


def anchor_weights(W: np.ndarray, names: Sequence[str], anchor: str | None) -> np.ndarray:
    """Reference weights: the named anchor, else uniform over the main pool."""
    if anchor is None:
        main = main_pool(W)
        return main / main.sum()
    if anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not one of the agents")
    return reference_weights(len(names), names.index(anchor))


def fit_matrix(
    W: np.ndarray,
    names: Sequence[str],
    *,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    min_games: int = DEFAULT_MIN_GAMES,
    max_se: float = DEFAULT_MAX_SE,
    start: np.ndarray | None = None,
) -> Ratings:
    """Ratings, errors and flags from a wins matrix whose rows stand for ``names``."""
    W = _prepare(W)
    names = list(names)
    if len(names) != len(W):
        raise ValueError(f"{len(names)} names for a {len(W)}x{len(W)} wins matrix")
    ref = anchor_weights(W, names, anchor)
    elo = solve(W, prior, start)
    wins, losses = W.sum(axis=1), W.sum(axis=0)
    return ratings_of(
        names, elo, covariance(W, elo, prior, ref), ref, W,
        games=wins + losses, wins=wins, losses=losses, prior=prior, anchor=anchor, anchor_elo=anchor_elo,
        flags=lambda se: rating_flags(W, se, min_games, max_se),
    )  # fmt: skip


def ratings_of(
    names: list[str],
    elo: np.ndarray,
    cov: np.ndarray,
    ref: np.ndarray,
    W: np.ndarray,
    *,
    games: np.ndarray,
    wins: np.ndarray,
    losses: np.ndarray,
    prior: float,
    anchor: str | None,
    anchor_elo: float,
    flags: Callable[[np.ndarray], list[str]],
    model: str = "",
) -> Ratings:
    """`Ratings` from a fit (``elo``, mean 0, and its covariance measured from ``ref``):
    the ratings measured from the reference (the anchor at ``anchor_elo``), SEs, 95%
    intervals, scores, ``flags(se)``; ``model`` is added to the reference's words."""
    elo = elo - float(ref @ elo) + (anchor_elo if anchor is not None else 0.0)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        score = np.where(games > 0, wins / np.where(games > 0, games, 1), np.nan)
    reference = _describe(ref, names, anchor, anchor_elo)
    return Ratings(
        names=names,
        elo=elo,
        se=se,
        ci95=np.column_stack([elo - Z95 * se, elo + Z95 * se]) if len(names) else np.zeros((0, 2)),
        games=games,
        wins=wins,
        losses=losses,
        score=score,
        covariance=cov,
        flags=flags(se),
        wins_matrix=W,
        prior=prior,
        anchor=anchor,
        anchor_elo=anchor_elo,
        reference=f"{reference}; {model}" if model else reference,
    )


def _describe(ref: np.ndarray, names: list[str], anchor: str | None, anchor_elo: float) -> str:
    if anchor is not None:
        return f"{anchor} fixed at {anchor_elo:g}"
    used = int((ref > 0).sum())
    return "mean 0" if used == len(names) else f"mean 0 over the main pool ({used} of {len(names)} agents)"


def fit(
    rows: Iterable[Row],
    names: Sequence[str] = (),
    *,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    min_games: int = DEFAULT_MIN_GAMES,
    max_se: float = DEFAULT_MAX_SE,
) -> Ratings:
    """Ratings from match rows (``seat0``, ``seat1``, ``winner``); ``names`` fixes the
    order (agents without games get the prior's rating and a flag)."""
    W, allnames = aggregate(rows, names)
    return fit_matrix(
        W, allnames, prior=prior, anchor=anchor, anchor_elo=anchor_elo, min_games=min_games, max_se=max_se
    )


def fit_counts(
    rows: Iterable[Row],
    names: Sequence[str] = (),
    *,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    min_games: int = DEFAULT_MIN_GAMES,
    max_se: float = DEFAULT_MAX_SE,
) -> Ratings:
    """`fit` of counted results (see `aggregate_counts`): the same ratings, from a few rows
    per pairing instead of one per match."""
    W, allnames = aggregate_counts(rows, names)
    return fit_matrix(
        W, allnames, prior=prior, anchor=anchor, anchor_elo=anchor_elo, min_games=min_games, max_se=max_se
    )


# -- likelihood of superiority -----------------------------------------------------------------


def los_matrix(ratings: Ratings | Bootstrap) -> np.ndarray:
    """``LOS[i, j] = P(r_i > r_j)`` under the normal approximation with the ratings'
    covariance: ``Phi((r_i - r_j) / se_diff)``; the diagonal is 0.5."""
    elo = np.asarray(ratings.elo, dtype=float)
    c = np.asarray(ratings.covariance, dtype=float)
    d = elo[:, None] - elo[None, :]
    var = np.diag(c)[:, None] + np.diag(c)[None, :] - 2 * c
    sd = np.sqrt(np.clip(var, 0.0, None))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(sd > 0, d / np.where(sd > 0, sd, 1.0), np.sign(d) * np.inf)
    los = normal_cdf(z)
    los[d == 0] = 0.5
    np.fill_diagonal(los, 0.5)
    return los


# -- per-pairing score tables ------------------------------------------------------------------


def pair_scores(rows: Iterable[Row], names: Sequence[str] = ()) -> pd.DataFrame:
    """Per pairing ``a~b``: matches, a's wins, b's wins, no results, a's score (share of
    decided matches), and with pair information the duplicate pairs and the distribution
    of a's pair score (``pairs_0``, ``pairs_half``, ``pairs_1``: a won none, one or both
    of a complete pair's two matches), a's mean pair score and the incomplete pairs."""
    rows = list(rows)
    allnames = all_names(rows, names)
    order = {name: k for k, name in enumerate(allnames)}
    table: dict[str, dict[str, Any]] = {}
    pairs: dict[tuple[str, int], list[int | None]] = {}
    for r in rows:
        seats = (r["seat0"], r["seat1"])
        pairing = r.get("pairing")
        if is_missing(pairing):
            a, b = sorted(seats, key=lambda s: (order[s], s))
            pairing = f"{a}~{b}"
        else:
            pairing = str(pairing)
            a, _, b = pairing.partition("~")
            if {a, b} != set(seats):
                a, b = sorted(seats, key=lambda s: (order[s], s))
        t = table.setdefault(pairing, {"pairing": pairing, "a": a, "b": b, "matches": 0, "a_wins": 0, "b_wins": 0,
                                       "no_result": 0})  # fmt: skip
        t["matches"] += 1
        s = winner_index(r["winner"])
        a_won = None if s is None else int(seats[s] == t["a"])
        if a_won is None:
            t["no_result"] += 1
        elif a_won:
            t["a_wins"] += 1
        else:
            t["b_wins"] += 1
        pair_index = r.get("pair_index")
        if not is_missing(pair_index):
            pairs.setdefault((pairing, int(pair_index)), []).append(a_won)
    for t in table.values():
        t.update(pairs=0, pairs_0=0, pairs_half=0, pairs_1=0, incomplete_pairs=0)
    for (pairing, _), results in pairs.items():
        t = table[pairing]
        if len(results) == 2 and None not in results:
            t["pairs"] += 1
            t[("pairs_0", "pairs_half", "pairs_1")[sum(results)]] += 1
        else:
            t["incomplete_pairs"] += 1
    cols = ["pairing", "a", "b", "matches", "a_wins", "b_wins", "no_result", "a_score", "pairs", "pairs_0",
            "pairs_half", "pairs_1", "a_pair_score", "incomplete_pairs"]  # fmt: skip
    out = []
    for t in table.values():
        decided_n = t["a_wins"] + t["b_wins"]
        t["a_score"] = t["a_wins"] / decided_n if decided_n else math.nan
        t["a_pair_score"] = (t["pairs_half"] * 0.5 + t["pairs_1"]) / t["pairs"] if t["pairs"] else math.nan
        out.append(t)
    out.sort(key=lambda t: (order[t["a"]], order[t["b"]], t["pairing"]))
    return pd.DataFrame(out, columns=cols)


def pair_scores_counted(counts: Iterable[Row], pairs: Iterable[Row], names: Sequence[str] = ()) -> pd.DataFrame:
    """`pair_scores` from counted results, for a store whose pairings name their seats
    (``a~b`` with a and b the two agents, as every store's do):

    - ``counts``: rows of ``seat0``, ``seat1``, ``pairing``, ``winner``, ``count`` (how many
      matches ended so: `Store.result_counts`);
    - ``pairs``: rows of ``pairing``, ``games`` (matches of a duplicate pair stored),
      ``no_result`` (those without a result), ``a_wins`` (those a won) and ``count`` (how
      many pairs of the pairing are so: `Store.pair_counts`).

    Raises ValueError for a pairing that does not name its seats (`pair_scores` reads such
    rows match by match)."""
    counts, pairs = list(counts), list(pairs)
    allnames = all_names(counts, names)
    order = {name: k for k, name in enumerate(allnames)}
    table: dict[str, dict[str, Any]] = {}
    for r in counts:
        pairing = str(r["pairing"])
        a, _, b = pairing.partition("~")
        if {a, b} != {r["seat0"], r["seat1"]}:
            raise ValueError(f"pairing {pairing!r} does not name its seats {r['seat0']!r} and {r['seat1']!r}")
        t = table.setdefault(pairing, {"pairing": pairing, "a": a, "b": b, "matches": 0, "a_wins": 0, "b_wins": 0,
                                       "no_result": 0, "pairs": 0, "pairs_0": 0, "pairs_half": 0, "pairs_1": 0,
                                       "incomplete_pairs": 0})  # fmt: skip
        n = int(r["count"])
        t["matches"] += n
        s = winner_index(r["winner"])
        if s is None:
            t["no_result"] += n
        elif (r["seat0"], r["seat1"])[s] == a:
            t["a_wins"] += n
        else:
            t["b_wins"] += n
    for p in pairs:
        t = table[str(p["pairing"])]
        n = int(p["count"])
        if int(p["games"]) == 2 and int(p["no_result"]) == 0:
            t["pairs"] += n
            t[("pairs_0", "pairs_half", "pairs_1")[int(p["a_wins"])]] += n
        else:
            t["incomplete_pairs"] += n
    cols = ["pairing", "a", "b", "matches", "a_wins", "b_wins", "no_result", "a_score", "pairs", "pairs_0",
            "pairs_half", "pairs_1", "a_pair_score", "incomplete_pairs"]  # fmt: skip
    out = []
    for t in table.values():
        decided_n = t["a_wins"] + t["b_wins"]
        t["a_score"] = t["a_wins"] / decided_n if decided_n else math.nan
        t["a_pair_score"] = (t["pairs_half"] * 0.5 + t["pairs_1"]) / t["pairs"] if t["pairs"] else math.nan
        out.append(t)
    out.sort(key=lambda t: (order[t["a"]], order[t["b"]], t["pairing"]))
    return pd.DataFrame(out, columns=cols)
