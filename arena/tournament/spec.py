"""`MatchSpec`: one scheduled match, two-handed or at a table. Its id and seed are pure
functions of the config, which is what lets ``--resume`` skip what is stored."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class MatchSpec:
    """One scheduled match.

    Two-handed: ``pairing`` is "a~b" (config order), ``pair_index`` the duplicate pair,
    ``game`` 0 (a in seat 0) or 1 (the seats swapped). At a table (`arena.tournament.seating`):
    ``pairing`` is the table (its agents sorted, joined by "~"), ``pair_index`` the deck
    set, ``game`` the seating within the set, and ``teams`` the partnerships (seats 0+2,
    seats 1+3) in the four-handed games."""

    index: int  # its place in the schedule
    match_id: str
    pairing: str
    pair_index: int
    game: int
    seats: tuple[str, ...]  # agent names, seat 0 first
    seed: int
    teams: tuple[tuple[str, ...], ...] | None = None
