"""Ratings from team results and orders of finish (three- and four-handed games). Pure.

**Model.** A match is one or more *choices*: a set of sides, each a set of agents, of
which one side is chosen (wins). A side's strength is the sum of its members' ratings on
the log-odds scale, and side ``k`` is chosen with probability ``exp(s_k) / sum_l exp(s_l)``.

- A two-handed match is one choice between two sides of one agent: Bradley-Terry, the
  model of `arena.stats.rating`, to the last digit.
- A partnership match (four-handed games, teams of seats 0+2 and 1+3) is one choice
  between two sides of two: a team's strength is the sum of its members', so each
  agent's rating is identified from team results once agents have played with and
  against several others (the schedule rotates partners for that).
- A three-handed order of finish ``i > j > k`` is Plackett-Luce: ``i`` chosen from
  ``{i, j, k}``, then ``j`` from ``{j, k}``. Places shared by several seats count every
  order they allow, each with an equal part of the match's weight (two seats sharing
  first place: half a choice each way).

Why Plackett-Luce rather than the pairwise decomposition (the three pairs of a
three-handed match as three independent two-handed results): the three pairwise results
of one match are not independent (the winner beat both; if it beat ``j`` and ``j`` beat
``k``, it beat ``k``), so treating them as three matches counts the match's information
about one and a half times and gives intervals too narrow. Plackett-Luce is the
likelihood of the order itself, and its intervals cover at their stated rate
(tests/test_table_rating.py measures both).

The fit is `arena.stats.rating`'s: the same prior (``prior`` virtual draws per agent
against the pool mean), joint maximum a posteriori by Newton's method with a line search,
the covariance from the Fisher information's pseudo-inverse (every side of a choice has
the same number of members, so a common shift of all ratings changes nothing), measured
from the mean or an anchor, 95% intervals ``elo +- 1.96 se``. Results come back as a
`arena.stats.rating.Ratings`, so tables, differences, LOS and reports read them alike.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .rating import (
    DEFAULT_MAX_SE,
    DEFAULT_MIN_GAMES,
    DEFAULT_PRIOR,
    ELO,
    Ratings,
    anchor_weights,
    covariance_of,
    newton,
    prior_gradient_information,
    prior_log_density,
    rating_flags,
    ratings_of,
)


@dataclasses.dataclass(frozen=True)
class Choices:
    """Matches as choices. ``sides[c, k, m]``: the ``m``-th member (an agent index) of side
    ``k`` of choice ``c``, -1 for no side (a choice of fewer sides than the widest); every
    side of a choice has the same number of members. ``chosen[c]``: the side that won it.
    ``weight[c]``: what it counts (1 for a match's choice; less for a share of a tie)."""

    sides: np.ndarray  # (C, K, M) int
    chosen: np.ndarray  # (C,) int
    weight: np.ndarray  # (C,) float

    def __post_init__(self) -> None:
        s = self.sides
        if s.ndim != 3 or self.chosen.shape != (len(s),) or self.weight.shape != (len(s),):
            raise ValueError("sides must be (choices, sides, members) with one chosen side and weight per choice")
        present = s[:, :, 0] >= 0
        if (present[:, None, :] & (s.transpose(0, 2, 1) < 0)).any():
            raise ValueError("every side of a choice must have the same number of members")
        if len(s) and not present[np.arange(len(s)), self.chosen].all():
            raise ValueError("a chosen side is not one of its choice's sides")


def team_choices(
    teams: Sequence[Sequence[Sequence[int]]], winners: Sequence[int | None], counts: Sequence[float] | None = None
) -> Choices:
    """One choice per match between its teams (``teams[i]``: each team's agent indices);
    ``winners[i]`` the winning team's index, None for no decision (left out); ``counts[i]``
    how many matches ended so (default 1 each)."""
    counts = [1.0] * len(teams) if counts is None else counts
    kept = [(t, w, c) for t, w, c in zip(teams, winners, counts, strict=True) if w is not None]
    k = max((len(t) for t, _, _ in kept), default=2)
    m = max((len(side) for t, _, _ in kept for side in t), default=1)
    sides = np.full((len(kept), k, m), -1, dtype=np.int64)
    for i, (t, _, _) in enumerate(kept):
        for j, side in enumerate(t):
            sides[i, j, : len(side)] = side
    chosen = np.array([w for _, w, _ in kept], dtype=np.int64)
    return Choices(sides, chosen, np.array([c for _, _, c in kept], dtype=float))


def order_choices(
    seats: Sequence[Sequence[int]] | np.ndarray,
    places: Sequence[Sequence[int]] | np.ndarray,
    counts: Sequence[float] | np.ndarray | None = None,
) -> Choices:
    """Plackett-Luce choices of orders of finish: ``seats[i]`` the agents of match ``i``,
    ``places[i]`` their places (1 = first; equal places shared), ``counts[i]`` how many
    matches ended so (default 1 each). A match whose seats all share one place says
    nothing and is left out. Vectorised over the matches of each pattern of places (a
    handful: a three-handed match has at most 13), so a million matches take a moment."""
    counts = np.ones(len(seats)) if counts is None else np.asarray(counts, dtype=float)
    by_width: dict[int, list[int]] = {}
    for i, agents in enumerate(seats):
        by_width.setdefault(len(agents), []).append(i)
    k = max(by_width, default=2)
    parts: list[tuple[np.ndarray, np.ndarray]] = []  # (sides (C, k), weight (C,))
    for width, rows in by_width.items():
        at = np.asarray(rows, dtype=np.int64)
        agents = np.asarray([seats[i] for i in rows], dtype=np.int64).reshape(len(rows), width)
        place = np.asarray([places[i] for i in rows], dtype=np.int64).reshape(len(rows), width)
        patterns, which = np.unique(place, axis=0, return_inverse=True)
        for j, pattern in enumerate(patterns):
            if len(set(pattern.tolist())) <= 1:
                continue
            mine = np.flatnonzero(which.ravel() == j)
            groups = [[s for s in range(width) if pattern[s] == q] for q in sorted(set(pattern.tolist()))]
            orders = list(itertools.product(*(itertools.permutations(g) for g in groups)))
            w = counts[at[mine]] / len(orders)
            for order in orders:
                positions = [s for part in order for s in part]
                for stage in range(width - 1):
                    sides = np.full((len(mine), k), -1, dtype=np.int64)
                    sides[:, : width - stage] = agents[mine][:, positions[stage:]]
                    parts.append((sides, w))
    if not parts:
        return Choices(np.full((0, k, 1), -1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0))
    sides = np.concatenate([p for p, _ in parts])[:, :, None]
    return Choices(sides, np.zeros(len(sides), dtype=np.int64), np.concatenate([w for _, w in parts]))


def aggregate(ch: Choices, n: int | None = None) -> Choices:
    """The same choices in a canonical form (members of a side in order, sides in order)
    with identical ones merged, their weights summed: a fit costs the number of distinct
    line-ups, not of matches. ``n``: the number of agents, if known."""
    c, k, m = ch.sides.shape
    if not c:
        return ch
    radix = int(ch.sides.max()) + 2 if n is None else n + 1
    slots = ch.sides.reshape(c, k * m) + 1  # 0 for no side
    if m == 2:  # the common case (teams of two): a min and a max, not a sort
        lo, hi = np.minimum(slots[:, 0::2], slots[:, 1::2]), np.maximum(slots[:, 0::2], slots[:, 1::2])
        side_key = lo * radix + hi  # (C, K)
    else:
        ordered = np.sort(slots.reshape(c, k, m), axis=2)
        side_key = (ordered * radix ** np.arange(m - 1, -1, -1)).sum(axis=2)
    if k == 2:  # two sides: a swap, not a sort (a missing side has key 0 and goes last)
        swap = (side_key[:, 0] > side_key[:, 1]) & (side_key[:, 1] > 0)
        side_key = np.where(swap[:, None], side_key[:, ::-1], side_key)
        chosen = np.where(swap, 1 - ch.chosen, ch.chosen)
    else:
        order = np.argsort(np.where(side_key == 0, np.iinfo(np.int64).max, side_key), axis=1, kind="stable")
        chosen = np.argmax(order == ch.chosen[:, None], axis=1)
        side_key = np.take_along_axis(side_key, order, axis=1)
    bits = m * np.log2(radix)
    if k * bits + np.log2(k) < 62:  # one integer per choice: a fast 1-d unique
        key = np.zeros(c, dtype=np.int64)
        for j in range(k):
            key = key * radix**m + side_key[:, j]
        key = key * k + chosen
    else:
        key = np.concatenate([side_key, chosen[:, None]], axis=1)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True, axis=None if key.ndim == 1 else 0)
    weight = np.bincount(inverse.ravel(), weights=ch.weight, minlength=len(first))
    sides = ch.sides[first]
    if k == 2:
        sides = np.where(swap[first][:, None, None], sides[:, ::-1], sides)
    else:
        sides = np.take_along_axis(sides, order[first][:, :, None], axis=1)
    sides = np.sort(sides, axis=2)  # members in order (a missing side stays all -1)
    return Choices(sides, chosen[first], weight)


# -- the fit ------------------------------------------------------------------------------------


class Layout:
    """Choices aggregated and laid out for the fit (`prepare`): one row of agent indices
    per member slot (side k, member j), so each sum over a slot is one `np.bincount` over
    the choices. `solve` and `covariance` take one in place of the choices, to do this once."""

    def __init__(self, ch: Choices, n: int):
        c, k, m = ch.sides.shape
        self.n, self.k, self.m = n, k, m
        slots = ch.sides.reshape(c, k * m).T
        self.idx = np.ascontiguousarray(np.maximum(slots, 0))  # (K*M, C)
        self.valid = None if (slots >= 0).all() else np.ascontiguousarray(slots >= 0).astype(float)
        self.present = ch.sides[:, :, 0].T >= 0  # (K, C)
        self.chosen = ch.chosen
        self.weight = ch.weight
        self.cols = np.arange(c)
        #: the pairs of slots u <= v: the information is one `np.bincount` a pair an iteration
        #: (each pair's flat (row, column) indices made as needed: kept, they would hold ten
        #: integers a choice for teams of two)
        self.pairs = [(u, v) for u in range(k * m) for v in range(u, k * m)]

    def strengths(self, theta: np.ndarray) -> np.ndarray:
        """(K, C) side strengths, -inf where a choice has no such side."""
        s = np.zeros((self.k, len(self.chosen)))
        for slot in range(self.k * self.m):
            t = theta[self.idx[slot]]
            s[slot // self.m] += t if self.valid is None else t * self.valid[slot]
        return np.where(self.present, s, -np.inf)

    def log_likelihood(self, theta: np.ndarray) -> float:
        s = self.strengths(theta)
        top = s.max(axis=0)
        lse = top + np.log(np.exp(s - top).sum(axis=0))
        return float((self.weight * (s[self.chosen, self.cols] - lse)).sum())

    def gradient_information(self, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gradient of the log-likelihood and its negative Hessian: per choice,
        ``w X' (diag p - p p') X`` with ``X`` the sides' membership."""
        n, m = self.n, self.m
        s = self.strengths(theta)
        p = np.exp(s - s.max(axis=0))
        p /= p.sum(axis=0)
        coef = -p * self.weight
        coef[self.chosen, self.cols] += self.weight
        wp = self.weight * p
        g = np.zeros(n)
        for u in range(self.k * m):
            vu = None if self.valid is None else self.valid[u]
            g += np.bincount(self.idx[u], weights=coef[u // m] if vu is None else coef[u // m] * vu, minlength=n)
        side: dict[tuple[int, int], np.ndarray] = {}
        h = np.zeros(n * n)
        for u, v in self.pairs:
            ku, kv = u // m, v // m
            if (ku, kv) not in side:
                side[ku, kv] = wp[ku] - wp[ku] * p[kv] if ku == kv else -wp[ku] * p[kv]
            w = side[ku, kv] if self.valid is None else side[ku, kv] * self.valid[u] * self.valid[v]
            h += np.bincount(self.idx[u] * n + self.idx[v], weights=w, minlength=n * n)
        # slots u < v land off the diagonal (distinct agents), u == v on it: add the transpose
        h = h.reshape(n, n)
        return g, h + h.T - np.diag(np.diag(h))


def _log_posterior(theta: np.ndarray, lay: Layout, prior: float) -> float:
    return lay.log_likelihood(theta) + (prior_log_density(theta, prior) if prior else 0.0)


def _gradient_hessian(theta: np.ndarray, lay: Layout, prior: float) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the log-posterior and the Hessian of its negative (the information)."""
    g, H = lay.gradient_information(theta)
    if prior:
        gp, Hp = prior_gradient_information(theta, prior)
        g, H = g + gp, H + Hp
    return g, H


def prepare(ch: Choices | Layout, n: int) -> Layout:
    """``ch`` aggregated (`aggregate`) and laid out for the fit of ``n`` agents."""
    return ch if isinstance(ch, Layout) else Layout(aggregate(ch, n), n)


def solve(
    ch: Choices | Layout, n: int, prior: float = DEFAULT_PRIOR, *, tol: float = 1e-10, max_iter: int = 200
) -> np.ndarray:
    """Joint maximum-a-posteriori ratings (Elo, mean 0) of ``n`` agents from ``ch``."""
    if prior < 0:
        raise ValueError("the prior must be >= 0")
    if n == 0:
        return np.zeros(0)
    lay = prepare(ch, n)
    try:
        theta = newton(
            np.zeros(n),
            lambda t: _log_posterior(t, lay, prior),
            lambda t: _gradient_hessian(t, lay, prior),
            tol=tol,
            max_iter=max_iter,
            give_up=lambda t: prior == 0 and float(np.max(np.abs(t))) > 50,  # diverging: no maximum
        )
    except np.linalg.LinAlgError:  # not identified: only a prior > 0 can place some agents
        theta = None
    if theta is None:
        raise ValueError(
            "the rating fit does not converge: with no prior, maximum-likelihood ratings exist only when every "
            "agent both won and lost against the rest, and played with and against enough others to tell it "
            "from its partners; use a prior > 0"
        )
    return theta * ELO


def covariance(ch: Choices | Layout, n: int, elo: np.ndarray, prior: float = DEFAULT_PRIOR,
               anchor: int | np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Covariance of the ratings (Elo squared), mean 0 or measured from ``anchor`` (an
    agent index or reference weights), as `arena.stats.rating.covariance`."""
    if n == 0:
        return np.zeros((0, 0))
    _, H = _gradient_hessian(np.asarray(elo, dtype=float) / ELO, prepare(ch, n), prior)
    return covariance_of(H / ELO**2, anchor)


def pairwise_wins(ch: Choices, n: int) -> np.ndarray:
    """A wins matrix for connectivity and flags: each member of a chosen side beat each
    member of the other sides of its choice (weighted)."""
    c, k, m = ch.sides.shape
    if not c:
        return np.zeros((n, n))
    win = ch.sides[np.arange(c), ch.chosen]  # (C, M)
    out = np.zeros(n * n)
    for j in range(m):  # a member of the chosen side, against each member of each other side
        for side in range(k):
            for i in range(m):
                loser = ch.sides[:, side, i]
                valid = (win[:, j] >= 0) & (loser >= 0) & (ch.chosen != side)
                out += np.bincount(win[valid, j] * n + loser[valid], weights=ch.weight[valid], minlength=n * n)
    return out.reshape(n, n)


def fit_choices(
    ch: Choices,
    names: Sequence[str],
    *,
    games: np.ndarray,
    wins: np.ndarray,
    losses: np.ndarray,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    min_games: int = DEFAULT_MIN_GAMES,
    max_se: float = DEFAULT_MAX_SE,
    model: str = "team",
) -> Ratings:
    """`Ratings` of ``names`` from choices; ``games``/``wins``/``losses`` per agent are
    the matches it played, won (its side first) and lost, as the table shows them."""
    names = list(names)
    n = len(names)
    ch = aggregate(ch, n)
    W = pairwise_wins(ch, n)
    ref = anchor_weights(W, names, anchor)
    lay = Layout(ch, n)
    elo = solve(lay, n, prior)
    cov = covariance(lay, n, elo, prior, ref)
    few = [f"few matches ({g:g})" if 0 < g < min_games else "" for g in games]

    def flags(se: np.ndarray) -> list[str]:  # per match, not per pairwise result as W counts them
        return ["; ".join(x for x in (f, extra) if x) for f, extra in zip(rating_flags(W, se, 0, max_se), few,
                                                                           strict=True)]  # fmt: skip

    what = {"team": "team model (a team's rating is the sum of its members')",
            "order": "Plackett-Luce (orders of finish)"}
    return ratings_of(
        names, elo, cov, ref, W,
        games=np.asarray(games, dtype=float), wins=np.asarray(wins, dtype=float),
        losses=np.asarray(losses, dtype=float), prior=prior, anchor=anchor, anchor_elo=anchor_elo, flags=flags,
        model=what.get(model, model),
    )  # fmt: skip


#: The columns of a counted (or a raw) table result, as `Store.table_counts` and
#: `Store.table_result_chunks` give them (``count`` is 1 for a raw row).
RESULT_COLUMNS = ("seat0", "seat1", "seat2", "seat3", "kind", "winner", "place0", "place1", "place2", "place3")


@dataclasses.dataclass(frozen=True)
class TableResults:
    """Table results as arrays: ``seat[r, s]`` the agent index in seat ``s`` of line-up ``r``,
    ``winner[r]`` (-1: none), ``place[r, s]`` (-1: none), ``count[r]`` how many matches
    ended so, ``kinds`` the result kinds present, ``names`` the agents."""

    seat: np.ndarray
    winner: np.ndarray
    place: np.ndarray
    count: np.ndarray
    kinds: frozenset
    names: list[str]

    @classmethod
    def from_chunks(cls, chunks: Iterable[Sequence[Sequence]], names: Sequence[str]) -> TableResults:
        """From raw rows (`RESULT_COLUMNS` in order, one match each), a chunk at a time:
        only integer arrays are kept, so memory stays near 50 bytes a match."""
        names = list(names)
        index: dict[str | None, int] = {n: i for i, n in enumerate(names)}
        index[None] = -1
        seats, winners, places, kinds = [], [], [], set()
        width = 0
        for chunk in chunks:
            if not chunk:
                continue
            cols = list(zip(*chunk, strict=True))
            width = max(width, 4 if any(x is not None for x in cols[3]) else 3)
            for s in range(4):
                for name in set(cols[s]) - index.keys():  # a merged store's agents
                    index[name] = len(names)
                    names.append(name)
            n = len(chunk)
            seats.append(np.stack([np.fromiter(map(index.__getitem__, cols[s]), np.int64, n) for s in range(4)], 1))
            kinds.update(cols[4])
            winners.append(np.array(cols[5], dtype=float))  # None becomes NaN
            places.append(np.array(cols[6:10], dtype=float).T)
        if not seats:
            return cls(np.zeros((0, 3), np.int64), np.zeros(0, np.int64), np.zeros((0, 3), np.int64), np.zeros(0),
                       frozenset(), names)  # fmt: skip
        seat = np.concatenate(seats)[:, :width]
        winner = np.nan_to_num(np.concatenate(winners), nan=-1).astype(np.int64)
        place = np.nan_to_num(np.concatenate(places)[:, :width], nan=-1).astype(np.int64)
        return cls(seat, winner, place, np.ones(len(seat)), frozenset(kinds), names)

    @classmethod
    def from_codes(cls, chunks: Iterable[Sequence[Sequence]], names: Sequence[str]) -> TableResults | None:
        """From `Store.table_result_codes` (the agents as indices into ``names``), a chunk at
        a time; None if a seat holds an agent ``names`` lacks (read `from_chunks` then)."""
        parts = []
        for chunk in chunks:
            if chunk:
                parts.append(np.nan_to_num(np.array(chunk, dtype=float), nan=-1).astype(np.int64))  # None: -1
                if (parts[-1][:, :4] == -2).any():
                    return None
        if not parts:
            return cls(np.zeros((0, 3), np.int64), np.zeros(0, np.int64), np.zeros((0, 3), np.int64), np.zeros(0),
                       frozenset(), list(names))  # fmt: skip
        v = np.concatenate(parts)
        width = 4 if (v[:, 3] >= 0).any() else 3
        kinds = frozenset("team" if t == 1 else "order" for t in np.unique(v[:, 4]).tolist())
        return cls(v[:, :width], v[:, 5], v[:, 6 : 6 + width], np.ones(len(v)), kinds, list(names))

    @classmethod
    def of_store(cls, store: Any, names: Sequence[str]) -> TableResults:
        """A store's table results (`arena.results.store.Store`): read as numbers if every
        seat's agent is in ``names`` (the fast path), else by name."""
        return cls.from_codes(store.table_result_codes(names), names) or cls.from_chunks(
            store.table_result_chunks(), names)

    @classmethod
    def from_counts(cls, rows: Sequence[dict] | dict[str, Sequence], names: Sequence[str]) -> TableResults:
        """From counted rows (dicts) or columns (a dict of equal-length lists) with ``count``."""
        cols = rows if isinstance(rows, dict) else {c: [r.get(c) for r in rows] for c in (*RESULT_COLUMNS, "count")}
        total = len(cols["count"])
        cols = {c: cols.get(c, [None] * total) for c in (*RESULT_COLUMNS, "count")}
        names = list(names)
        width = 4 if any(x is not None for x in cols["seat3"]) else 3
        seen = pd.unique(np.concatenate([np.asarray(cols[f"seat{s}"], dtype=object) for s in range(width)]))
        known = set(names)
        names += sorted(str(x) for x in seen if x is not None and x not in known)  # a merged store's agents
        codes = [pd.Categorical(cols[f"seat{s}"], categories=names).codes.astype(np.int64) for s in range(width)]
        seat = np.stack(codes, axis=1).reshape(-1, width)  # agent indices (int8 codes would overflow later)
        winner = np.asarray([-1 if w is None else w for w in cols["winner"]], dtype=np.int64)
        place = np.array([[-1 if x is None else x for x in cols[f"place{s}"]] for s in range(width)]).T
        return cls(seat, winner, place.reshape(-1, width).astype(np.int64), np.asarray(cols["count"], dtype=float),
                   frozenset(cols["kind"]), names)  # fmt: skip


def fit_table_counts(
    rows: Sequence[dict] | dict[str, Sequence] | TableResults,
    names: Sequence[str] = (),
    *,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    min_games: int = DEFAULT_MIN_GAMES,
    max_se: float = DEFAULT_MAX_SE,
) -> Ratings:
    """`Ratings` from table results: counted (what `Store.table_counts` gives: a row per
    line-up and outcome with ``seat0..3``, ``kind``, ``winner``, ``place0..3`` and ``count``,
    as row dicts or as columns), or `TableResults` (`arena ratings` reads a store's matches
    in chunks into one). Team results (``kind`` "team": seats 0+2 against 1+3) by the team
    model, the rest (three-handed winners and orders of finish, by their places) by
    Plackett-Luce. A match with no result (no winner and no places) counts as played only.
    Vectorised: a million matches take about a second."""
    res = rows if isinstance(rows, TableResults) else TableResults.from_counts(rows, names)
    names, seat, count = res.names, res.seat, res.count
    n, width = len(names), seat.shape[1]
    if len(res.kinds) > 1:
        raise ValueError("team results and orders of finish of one pool: rate each game on its own")
    games = np.bincount(seat.ravel(), weights=np.repeat(count, width), minlength=n)
    if res.kinds == {"team"}:
        decided = res.winner >= 0
        seat, winner, count = seat[decided], res.winner[decided], count[decided]
        first = (np.arange(4)[None, :] % 2) == winner[:, None]  # (R, 4): the seat's team won
        ch = Choices(np.stack([seat[:, [0, 2]], seat[:, [1, 3]]], axis=1), winner, count)
        model = "team"
    else:
        decided = (res.place > 0).all(axis=1)
        seat, place, count = seat[decided], res.place[decided], count[decided]
        first = place == 1
        ch = order_choices(seat, place, count)
        model = "order"
    weights = np.repeat(count, width)
    wins = np.bincount(seat.ravel(), weights=weights * first.ravel(), minlength=n)
    losses = np.bincount(seat.ravel(), weights=weights * ~first.ravel(), minlength=n)
    return fit_choices(
        ch, names, games=games, wins=wins, losses=losses, prior=prior, anchor=anchor, anchor_elo=anchor_elo,
        min_games=min_games, max_se=max_se, model=model,
    )  # fmt: skip
