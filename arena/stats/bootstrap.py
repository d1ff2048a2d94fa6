"""The ratings' bootstrap over duplicate pairs. Pure (numpy, no I/O).

The analytical errors of `arena.stats.rating` treat matches as independent. In duplicate
pairs (the same decks, seats swapped) the two matches of a pair are negatively
correlated, so those errors are conservative; `bootstrap` resamples whole pairs (within
each pairing) and measures it. Its draws are rescaled (Rao and Wu: k - 1 of a pairing's k
pairs, weighted k/(k-1)) so that few pairs per pairing do not shrink its variance, and its
intervals are normal, ``elo +- 1.96 sd``: in simulation they hold the truth 95% of the
time from 5 pairs per pairing up, where plain percentile intervals held it 89-93%
(bench/bootstrap_coverage.py). An agent the results leave one-sided is open on that side
and flagged, never shown with a false width of zero.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from .rating import (
    DEFAULT_MAX_SE,
    DEFAULT_MIN_GAMES,
    DEFAULT_PRIOR,
    Z95,
    Row,
    aggregate_indices,
    all_names,
    anchor_weights,
    covariance,
    disconnected_mask,
    is_missing,
    open_sides,
    rating_flags,
    reference_weights,
    solve,
    solve_many,
    winner_index,
)


@dataclasses.dataclass(frozen=True)
class Bootstrap:
    """Bootstrap of the ratings: ``elo`` is the fit on all the data; ``se`` is the standard
    deviation of ``samples`` (reps, n), the refits on rescaled resamples of whole pairs
    (see `bootstrap_samples`; NaN rows are replicates that could not be fitted, counted in
    ``failed``), and ``ci95`` (n, 2) is ``elo +- 1.96 se``.

    Why: with k pairs in a pairing, k plain draws have (k-1)/k of the variance, and
    percentile intervals under-cover with few pairs. In bench/bootstrap_coverage.py, at 5
    to 20 pairs per pairing, plain percentile 95% intervals held the true rating 89-93% of
    the time (92-94% with the rescaling alone); the rescaled SD with a normal interval held
    it 94.6-95.3%, the analytic intervals 95.5-98.7% (wider: they ignore the negative
    correlation of a pair's two matches).

    A rating the results cannot bound (``open``: see `open_sides`, an agent that won or
    lost every match; and an agent without matches or cut off from the main pool, whose
    level rests on the prior alone) has that end of its interval at infinity and an
    infinite SE: every resample is as one-sided as the data, so the samples agree and
    would give a zero-width interval, a false certainty. Its other end is the wider of
    the bootstrap's and the analytic one, for the same reason. ``flags`` are the analytic
    table's (`Ratings.flags`: "lost every match", "few matches", ...), with the
    bootstrap's SE for "large SE" and, for an open rating, which end the bootstrap cannot
    bound."""

    names: list[str]
    elo: np.ndarray
    se: np.ndarray
    ci95: np.ndarray
    samples: np.ndarray
    failed: int
    seed: int | None
    groups: int  # resampled units (duplicate pairs, or single matches without pair info)
    open: list[str] = dataclasses.field(default_factory=list)  # per agent: "", "above", "below", "both"
    flags: list[str] = dataclasses.field(default_factory=list)  # per agent: the analytic flags, why it is open

    @property
    def covariance(self) -> np.ndarray:
        ok = self.samples[~np.isnan(self.samples).any(axis=1)]
        return np.cov(ok, rowvar=False).reshape(len(self.names), len(self.names))

    def se_diff(self, a: str, b: str) -> float:
        i, j = self.names.index(a), self.names.index(b)
        d = self.samples[:, i] - self.samples[:, j]
        return float(np.nanstd(d, ddof=1))

    def to_frame(self) -> pd.DataFrame:
        """One row per agent, best first: agent, elo, boot_se, boot_low, boot_high (an open
        end is infinite) and flag."""
        df = pd.DataFrame(
            {"agent": self.names, "elo": self.elo, "boot_se": self.se, "boot_low": self.ci95[:, 0],
             "boot_high": self.ci95[:, 1], "flag": self.flags or [""] * len(self.names)}
        )  # fmt: skip
        return df.sort_values(["elo", "agent"], ascending=[False, True], kind="stable").reset_index(drop=True)


def bootstrap_samples(
    winners: np.ndarray,
    losers: np.ndarray,
    n: int,
    groups: np.ndarray,
    strata: np.ndarray | None = None,
    *,
    reps: int = 200,
    seed: int | np.random.Generator | None = 0,
    prior: float = DEFAULT_PRIOR,
    anchor: int | np.ndarray | None = None,
    anchor_elo: float = 0.0,
    start: np.ndarray | None = None,
    rescale: bool = True,
) -> tuple[np.ndarray, int]:
    """Refit ``reps`` times on resampled groups: results carry a group id (``groups``,
    e.g. the duplicate pair), groups are drawn with replacement within their stratum
    (``strata``, one per result, e.g. the pairing; constant within a group). Returns the
    (reps, n) Elo samples and the failures. The samples are measured like `covariance`'s:
    mean 0 for ``anchor=None``, else the agent index or the weighted mean ``anchor`` at
    ``anchor_elo``.

    With ``rescale`` (Rao and Wu's rescaled bootstrap for stratified samples), a stratum
    of k >= 2 groups is resampled as k - 1 draws weighted k / (k - 1): the weighted totals
    then have the stratum's unbiased variance, where k plain draws give (k-1)/k of it, a
    bias that matters with few pairs per pairing. A stratum of one group is kept as is.
    The replicates are fitted together (`solve_many`)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    w = np.asarray(winners, dtype=np.int64)
    lo = np.asarray(losers, dtype=np.int64)
    gid = np.unique(np.asarray(groups), return_inverse=True)[1].ravel()
    G = int(gid.max()) + 1 if gid.size else 0
    group_stratum = np.zeros(G, dtype=np.int64)
    if strata is not None:
        sid = np.unique(np.asarray(strata), return_inverse=True)[1].ravel()
        group_stratum[gid] = sid
    order = np.argsort(group_stratum, kind="stable")  # groups, stratum by stratum
    sizes = np.bincount(group_stratum, minlength=1)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    draws = np.where(sizes > 1, sizes - 1, sizes) if rescale else sizes  # draws per stratum
    slot_stratum = np.repeat(np.arange(len(sizes)), draws)
    slot_start, slot_size = starts[slot_stratum], sizes[slot_stratum]
    slot_weight = (sizes / np.maximum(draws, 1))[slot_stratum]
    # the results' cells, sorted, so that a replicate's matrix is one reduceat
    cells = w * n + lo
    by_cell = np.argsort(cells, kind="stable")
    cell_ids, cell_starts = np.unique(cells[by_cell], return_index=True)
    base = solve(aggregate_indices(w, lo, n), prior, start) if start is None else np.asarray(start, dtype=float)
    m = reference_weights(n, anchor) if n else np.zeros(0)
    shift = 0.0 if anchor is None else anchor_elo
    samples = np.full((reps, n), np.nan)
    chunk = max(1, 2_000_000 // max(n * n, len(cells), G, 1))  # replicates fitted at once
    for b0 in range(0, reps, chunk):
        c = min(chunk, reps - b0)
        picks = order[slot_start + (rng.random((c, len(slot_start))) * slot_size).astype(np.int64)]
        flat = (np.arange(c)[:, None] * G + picks).ravel()
        counts = np.bincount(flat, weights=np.tile(slot_weight, c), minlength=c * G).reshape(c, G)
        Wb = np.zeros((c, n * n))
        if cells.size:
            Wb[:, cell_ids] = np.add.reduceat(counts[:, gid[by_cell]], cell_starts, axis=1)
        elo = solve_many(Wb.reshape(c, n, n), prior, base)
        samples[b0 : b0 + c] = elo - (elo @ m)[:, None] + shift
    failed = int(np.isnan(samples).any(axis=1).sum()) if n else 0
    return samples, failed


def bootstrap(
    rows: Iterable[Row],
    names: Sequence[str] = (),
    *,
    reps: int = 200,
    seed: int | None = 0,
    prior: float = DEFAULT_PRIOR,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    min_games: int = DEFAULT_MIN_GAMES,
    max_se: float = DEFAULT_MAX_SE,
) -> Bootstrap:
    """Bootstrap the ratings over whole duplicate pairs: rows are grouped by
    (``pairing``, ``pair_index``) and pairs are resampled within each pairing, rescaled
    (see `bootstrap_samples`); a row without pair information is its own group. Ratings
    are measured as in `fit`; intervals are ``elo +- 1.96 se`` (see `Bootstrap`), flags
    as in `fit` (``min_games``, ``max_se``)."""
    rows = [r for r in rows]
    allnames = all_names(rows, names)
    index = {name: k for k, name in enumerate(allnames)}
    n = len(allnames)
    winners, losers, group_keys, strata = [], [], [], []
    for pos, r in enumerate(rows):
        s = winner_index(r["winner"])
        if s is None:
            continue
        seats = (r["seat0"], r["seat1"])
        pairing = r.get("pairing")
        pairing = "~".join(sorted(seats)) if is_missing(pairing) else str(pairing)
        pair_index = r.get("pair_index")
        group_keys.append(f"#{pos}" if is_missing(pair_index) else f"{pairing}#{int(pair_index)}")
        strata.append(pairing)
        winners.append(index[seats[s]])
        losers.append(index[seats[1 - s]])
    w_arr, l_arr = np.array(winners, dtype=np.int64), np.array(losers, dtype=np.int64)
    W = aggregate_indices(w_arr, l_arr, n)
    ref = anchor_weights(W, allnames, anchor)
    shift = 0.0 if anchor is None else anchor_elo
    elo = solve(W, prior)
    samples, failed = bootstrap_samples(
        w_arr, l_arr, n, np.array(group_keys), np.array(strata), reps=reps, seed=seed, prior=prior, anchor=ref,
        anchor_elo=shift, start=elo,
    )  # fmt: skip
    elo = elo - float(ref @ elo) + shift
    ok = samples[~np.isnan(samples).any(axis=1)]
    se = ok.std(axis=0, ddof=1) if len(ok) >= 2 else np.full(n, np.nan)
    sides = open_sides(W)
    games = W.sum(axis=0) + W.sum(axis=1)
    for i in np.flatnonzero((games == 0) | disconnected_mask(W)):
        sides[i] = "both"  # its level rests on the prior alone
    if anchor is not None:
        sides[allnames.index(anchor)] = ""  # fixed by definition
    is_open = np.array([bool(side) for side in sides], dtype=bool)
    base_flags = rating_flags(W, np.where(is_open, np.nan, se), min_games, max_se)
    flags = ["; ".join(x for x in (f, _open_note(side)) if x) for f, side in zip(base_flags, sides, strict=True)]
    # the bounded end of an open rating: the resamples are as one-sided as the data there
    # too (a chain of one-way results gives them no spread at all), so take the wider of
    # the bootstrap's and the analytic SE
    analytic = np.sqrt(np.clip(np.diag(covariance(W, elo, prior, ref)), 0.0, None)) if n else se
    half = Z95 * np.where(is_open, np.fmax(se, analytic), se)
    ci = np.column_stack([elo - half, elo + half]) if n else np.zeros((0, 2))
    for i, side in enumerate(sides):
        if side in ("above", "both"):
            ci[i, 1] = math.inf
        if side in ("below", "both"):
            ci[i, 0] = -math.inf
    se = np.where(is_open, math.inf, se)
    return Bootstrap(allnames, elo, se, ci, samples, failed, seed, len(set(group_keys)), sides, flags)


def _open_note(side: str) -> str:
    """Which end of a rating the bootstrap cannot bound (see `Bootstrap`), in words."""
    return {"": "", "above": "the bootstrap cannot bound it above", "below": "the bootstrap cannot bound it below",
            "both": "the bootstrap cannot bound it either way"}[side]  # fmt: skip


