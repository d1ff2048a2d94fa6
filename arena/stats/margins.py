"""Win-margin statistics: how matches were won, not only who won. Pure (pandas in, out).

- a match's **margin**, from each agent's side: its final game points minus the
  opponent's (the winner's margin is positive);
- **game points per deal** won by each side: how many of its won deals were worth 1, 2
  or 3 (a plain win, Schneider, Schwarz);
- **pair margins**: per duplicate pair, the sum of an agent's margins over the two
  matches of the pair (the same decks, seats swapped), where the luck of the cards
  largely cancels.

Means come with 95% confidence intervals (normal approximation, 1.96 standard errors of
the mean). Inputs are the ``matches`` and ``deals`` tables of `arena.results.store` as
DataFrames.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

Z95 = 1.959963984540054


def mean_ci(values: np.ndarray | pd.Series) -> tuple[float, float, float]:
    """Mean and its 95% interval; the interval is NaN with fewer than two values."""
    x = np.asarray(values, dtype=float)
    if len(x) == 0:
        return math.nan, math.nan, math.nan
    m = float(x.mean())
    if len(x) < 2:
        return m, math.nan, math.nan
    half = Z95 * float(x.std(ddof=1)) / math.sqrt(len(x))
    return m, m - half, m + half


def match_sides(matches: pd.DataFrame) -> pd.DataFrame:
    """One row per (match, agent): the agent's margin, opponent, pairing and pair."""
    if matches.empty:
        return pd.DataFrame(columns=["id", "agent", "opponent", "pairing", "pair_index", "margin", "won"])
    played = matches[matches["fault"].isna()]
    sides = []
    for seat in (0, 1):
        me, other = f"score{seat}", f"score{1 - seat}"
        sides.append(
            pd.DataFrame(
                {
                    "id": played["id"],
                    "agent": played[f"seat{seat}"],
                    "opponent": played[f"seat{1 - seat}"],
                    "pairing": played["pairing"],
                    "pair_index": played["pair_index"],
                    "margin": played[me] - played[other],
                    "won": played["winner"] == seat,
                }
            )
        )
    return pd.concat(sides, ignore_index=True)


def margin_summary(matches: pd.DataFrame, by: str = "agent") -> pd.DataFrame:
    """Mean match margin with its 95% interval, per agent (``by="agent"``) or per
    (pairing, agent) (``by="pairing"``). Forfeited matches are left out: a forfeit's
    margin says nothing about play."""
    sides = match_sides(matches)
    keys = ["agent"] if by == "agent" else ["pairing", "agent"]
    rows = []
    for key, g in sides.groupby(keys, sort=True):
        m, lo, hi = mean_ci(g["margin"])
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(keys, key, strict=True)), "matches": len(g), "mean_margin": m, "ci_low": lo,
                     "ci_high": hi, "mean_margin_won": float(g.loc[g["won"], "margin"].mean()) if g["won"].any()
                     else math.nan})  # fmt: skip
    columns = [*keys, "matches", "mean_margin", "ci_low", "ci_high", "mean_margin_won"]
    return pd.DataFrame(rows, columns=columns)  # the columns even with no match played (all forfeits)


def pair_margins(matches: pd.DataFrame) -> pd.DataFrame:
    """Per duplicate pair and agent: the sum of its margins over the pair's two matches
    (complete pairs only) and the pair score (0, 1/2 or 1)."""
    sides = match_sides(matches)
    if sides.empty:
        return pd.DataFrame(columns=["pairing", "pair_index", "agent", "pair_margin", "pair_score"])
    g = sides.groupby(["pairing", "pair_index", "agent"], sort=True)
    out = g.agg(pair_margin=("margin", "sum"), wins=("won", "sum"), games=("won", "size")).reset_index()
    out = out[out["games"] == 2].copy()
    out["pair_score"] = out["wins"] / 2
    return out.drop(columns=["wins", "games"])


def pair_margin_summary(matches: pd.DataFrame) -> pd.DataFrame:
    """Per (pairing, agent): mean pair margin with its 95% interval, and the pair-score
    counts."""
    pm = pair_margins(matches)
    rows = []
    for (pairing, agent), g in pm.groupby(["pairing", "agent"], sort=True):
        m, lo, hi = mean_ci(g["pair_margin"])
        counts = g["pair_score"].value_counts()
        rows.append({"pairing": pairing, "agent": agent, "pairs": len(g), "mean_pair_margin": m, "ci_low": lo,
                     "ci_high": hi, "pairs_lost": int(counts.get(0.0, 0)), "pairs_split": int(counts.get(0.5, 0)),
                     "pairs_won": int(counts.get(1.0, 0))})  # fmt: skip
    columns = ["pairing", "agent", "pairs", "mean_pair_margin", "ci_low", "ci_high", "pairs_lost", "pairs_split",
               "pairs_won"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)  # the columns even with no complete pair played


def deal_points(matches: pd.DataFrame, deals: pd.DataFrame) -> pd.DataFrame:
    """Per agent: the deals it won by game points (1, 2, 3), their shares, and drawn deals."""
    if deals.empty:
        return pd.DataFrame(columns=["agent", "deals_won", "won_1", "won_2", "won_3", "share_1", "share_2", "share_3"])
    seats = matches.set_index("id")[["seat0", "seat1"]]
    d = deals.join(seats, on="match_id")
    won = d[d["winner"].notna()].copy()
    won["agent"] = np.where(won["winner"] == 0, won["seat0"], won["seat1"])
    won["worth"] = won["game_points"]  # the deal's own worth; a carried draw point is apart
    table = won.pivot_table(index="agent", columns="worth", values="deal", aggfunc="count", fill_value=0)
    out = pd.DataFrame({"agent": table.index})
    for k in (1, 2, 3):
        out[f"won_{k}"] = table[k].to_numpy() if k in table.columns else 0
    out["deals_won"] = out[["won_1", "won_2", "won_3"]].sum(axis=1)
    for k in (1, 2, 3):
        out[f"share_{k}"] = out[f"won_{k}"] / out["deals_won"].where(out["deals_won"] > 0)
    return out.reset_index(drop=True)


def deal_points_counted(counts: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """`deal_points` from counted deals: rows of ``seat0``, ``seat1``, ``winner``,
    ``game_points`` and ``count`` (how many deals ended so: `Store.deal_counts`)."""
    columns = ["agent", "deals_won", "won_1", "won_2", "won_3", "share_1", "share_2", "share_3"]
    won: dict[str, dict[int, int]] = {}
    for r in counts:
        if r["winner"] is None:
            continue
        agent = r["seat0"] if int(r["winner"]) == 0 else r["seat1"]
        won.setdefault(agent, {1: 0, 2: 0, 3: 0})[int(r["game_points"])] += int(r["count"])
    if not won:
        return pd.DataFrame(columns=columns)
    agents = sorted(won)
    out = pd.DataFrame({"agent": agents})
    for k in (1, 2, 3):
        out[f"won_{k}"] = np.array([won[a][k] for a in agents], dtype=np.int64)
    out["deals_won"] = out[["won_1", "won_2", "won_3"]].sum(axis=1)
    for k in (1, 2, 3):
        out[f"share_{k}"] = out[f"won_{k}"] / out["deals_won"].where(out["deals_won"] > 0)
    return out
