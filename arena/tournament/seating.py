"""Fair seatings for the three- and four-handed games: which tables, seated how, with which
decks. Pure: the schedule is a function of the agents, the format, the number of deck
sets and the root seed, so ``--resume`` can skip what is stored, as for two-handed pairs.

Duplicate play generalised (two-handed: each deck twice, the seats swapped):

- **Three-handed.** A *table* is three agents. In deck set ``k`` the table plays one deck
  (``derive_seed(root, "table", a, b, c, k)``, names sorted) in every rotation of the
  agents round the table: each agent holds each seat's cards once, so the deal's luck
  cancels within the set. ``seatings = "permutations"`` plays all six orders instead
  (the three rotations of both directions round the table: who sits on whose left
  changes too).
- **Partnerships (four-handed).** A *table* is four agents. They can be split into two
  teams in three ways; deck set ``k`` plays one deck in each split, twice: once with each
  team in seats 0 and 2 (the partnerships swapped, so each team holds each pair of hands
  once); an odd set seats each team's members the other way round, so over two sets each
  agent holds each of the four seats' cards once per partnership. Six matches a set;
  over them every agent of the table plays with each of the others (in two matches) and
  against each (in four), which is what lets team results identify each agent's own
  strength (`arena.stats.table_rating`).

Tables come from the pool by the format: ``round-robin`` every table of distinct agents,
``gauntlet`` every table that seats the challenger, ``head-to-head`` the one table of
exactly as many agents as seats. The schedule is set-major (set 0 of every table, then set
1, ...), so a partial run covers every table evenly. A match id is
``<table>#<set>.<game>``, the table's agents in sorted order joined by ``~``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from ..game import derive_seed
from .spec import MatchSpec

SEATINGS = ("rotations", "permutations")


def tables(names: Sequence[str], players: int, fmt: str, challenger: str | None = None) -> list[tuple[str, ...]]:
    """The tables (sorted tuples of distinct agents) a format takes from the pool."""
    if len(set(names)) != len(names):
        raise ValueError("the agents of a table schedule must be distinct")
    pool = sorted(names)
    if fmt == "head-to-head":
        if len(pool) != players:
            raise ValueError(f"head-to-head at a table of {players} needs exactly {players} agents, got {len(pool)}")
        return [tuple(pool)]
    if len(pool) < players:
        raise ValueError(f"a table of {players} needs at least {players} agents, got {len(pool)}")
    if fmt == "gauntlet":
        if challenger not in pool:
            raise ValueError(f"the challenger {challenger!r} is not one of the agents")
        others = [n for n in pool if n != challenger]
        return [tuple(sorted((challenger, *rest))) for rest in itertools.combinations(others, players - 1)]
    if fmt == "round-robin":
        return list(itertools.combinations(pool, players))
    raise ValueError(f"unknown format {fmt!r}")


def seatings(
    table: Sequence[str], seating: str = "rotations", set_index: int = 0
) -> list[tuple[tuple[str, ...], tuple | None]]:
    """The seatings of deck set ``set_index`` at ``table``: (seats, teams) for each game, in
    order. Four-handed, an odd set seats each team's members the other way round (who sits
    in seat 0 and who in seat 2), so that over two sets every agent holds every seat."""
    t = tuple(table)
    if len(t) == 3:
        if seating not in SEATINGS:
            raise ValueError(f"seatings must be one of {', '.join(SEATINGS)}, not {seating!r}")
        orders = [t, (t[0], t[2], t[1])] if seating == "permutations" else [t]
        return [(o[r:] + o[:r], None) for o in orders for r in range(3)]
    if len(t) == 4:
        out = []
        a = t[0]
        for partner in t[1:]:  # the three ways to split four agents into two teams
            x = (a, partner)
            y = tuple(n for n in t if n not in x)
            if set_index % 2:
                x, y = x[::-1], y[::-1]
            out.append(((x[0], y[0], x[1], y[1]), (x, y)))  # team x in seats 0 and 2
            out.append(((y[0], x[0], y[1], x[1]), (y, x)))  # the partnerships swapped
        return out
    raise ValueError(f"tables seat three or four agents, not {len(t)}")


def table_schedule(
    names: Sequence[str],
    players: int,
    fmt: str,
    sets: int,
    root: int,
    *,
    challenger: str | None = None,
    seating: str = "rotations",
) -> list[MatchSpec]:
    """Every match of a table tournament, set-major; see the module's docstring."""
    chosen = tables(names, players, fmt, challenger)
    out: list[MatchSpec] = []
    for k in range(sets):
        for table in chosen:
            key = "~".join(table)
            seed = derive_seed(root, "table", *table, k)
            for game, (seats, teams) in enumerate(seatings(table, seating, k)):
                out.append(MatchSpec(len(out), f"{key}#{k}.{game}", key, k, game, seats, seed, teams))
    return out
