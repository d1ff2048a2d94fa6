"""Standings from match rows: played, won, lost, score, game points, forfeits. Pure.

A row is a dict with the ``matches`` table's columns (see `arena.results.store`): ``seat0``,
``seat1``, ``winner`` (seat or None), ``score0``, ``score1``, ``forfeit_seat``; at a table
also ``seat2``, ``seat3``, ``kind``, ``score2`` and the places ``place0..3``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any


@dataclasses.dataclass
class Standing:
    name: str
    played: int = 0
    won: int = 0
    lost: int = 0
    no_result: int = 0
    points_for: int = 0
    points_against: int = 0
    forfeits: int = 0  # matches this agent forfeited by a fault

    @property
    def score(self) -> float:
        """Share of decided matches won."""
        decided = self.won + self.lost
        return self.won / decided if decided else 0.0


def standings(rows: Iterable[dict[str, Any]], names: Sequence[str] = ()) -> list[Standing]:
    """Per agent, best score first (ties: more wins, then name). At a table an agent wins
    when its side does (its team, or it finishes first) and loses otherwise; its game
    points are its side's, against the other sides' together."""
    table = {n: Standing(n) for n in names}
    for r in rows:
        seats = seats_of(r)
        kind = r.get("kind") or "winner"
        scores = [r["score0"], r["score1"], *([r["score2"]] if r.get("score2") is not None else [])]
        for s, name in enumerate(seats):
            side = s % 2 if kind == "team" else s
            st = table.setdefault(name, Standing(name))
            st.played += 1
            st.points_for += scores[side]
            st.points_against += sum(scores) - scores[side]
            first = r.get(f"place{s}") == 1 if kind == "order" else r["winner"] == side
            if r["winner"] is None and not (kind == "order" and r.get(f"place{s}") is not None):
                st.no_result += 1
            elif first:
                st.won += 1
            else:
                st.lost += 1
            if r.get("forfeit_seat") == s:
                st.forfeits += 1
    return sorted(table.values(), key=lambda t: (-t.score, -t.won, t.name))


def seats_of(row: dict[str, Any]) -> list[str]:
    """A match row's agents, seat 0 first: two, or three or four at a table."""
    return [row[f"seat{s}"] for s in range(4) if row.get(f"seat{s}") is not None]


def format_standings(table: list[Standing], *, tables: bool = False) -> str:
    """The standings as text; ``tables``: a three- or four-handed game, whose game points
    are each agent's side's net total (stakes and marks may be negative or halves)."""
    w = max([5, *(len(t.name) for t in table)])
    lines = [f"{'agent':<{w}}  {'played':>6}  {'won':>5}  {'lost':>5}  {'score':>6}  {'game pts':>11}  {'forfeits':>8}"]
    for t in table:
        pts = f"{t.points_for:g}" if tables else f"{t.points_for}-{t.points_against}"
        lines.append(
            f"{t.name:<{w}}  {t.played:>6}  {t.won:>5}  {t.lost:>5}  {100 * t.score:>5.1f}%  {pts:>11}  {t.forfeits:>8}"
        )
    return "\n".join(lines)
