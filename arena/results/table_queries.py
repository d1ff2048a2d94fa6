"""Counted results of the three- and four-handed games, for the report (`arena.report.tables`).

Every function takes a `Store` of such a game and returns a few rows per agent (or per
pair of agents, or per value), counted in SQL: the report keeps what it shows, not the
matches, so memory stays flat however many are stored. For a store without tables
(version 3, or a two-handed game) each returns nothing.

Words as in the store (`arena.results.store`): a *side* is what scores, a seat in the
three-handed games and a team in the four-handed ones (team ``t``: seats ``t`` and
``t + 2``, ``score0``/``score1``). An agent *won* a match when its side won (``winner``
names its seat, or its team) or, in an order of finish (``kind`` "order"), when it
finished first; a match has *no result* when it has neither a winner nor places. An
agent's *margin* in a match is its side's final score minus the best of the other sides'
(its team's lead over the other team; three-handed: positive only when it finished with
the highest score); forfeited matches have none. A deal's *gain* for a side is what the
side's score changed by in the deal (``gain0..2``, and a hand's carried point for the side
that took it). Dealer-sits-out keeps each match seat's gain (the dealer sitting out scores
with the winner, up to 6); in a store written before it did (``gain`` NULL), a seat that
played the deal gains the deal's game points if it won it, else nothing, and the dealer
sitting out is left out.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .store import Store

Rows = list[dict[str, Any]]


def _players(store: Store) -> int:
    """Seats at a match of ``store``, or 0 when it holds no tables."""
    return store.players if store.version == "4" and store.players > 2 else 0


def _form(store: Store) -> str:
    variant = (store.config or {}).get("variant")
    return variant.get("form", "") if isinstance(variant, dict) else ""


def _side(s: int, n: int) -> int:
    """The side of seat ``s`` at a table of ``n``: its team (four-handed) or itself."""
    return s % 2 if n == 4 else s


def _won(s: int, n: int) -> str:
    """SQL: 1 when the agent in seat ``s`` won the match (see the module's words), else 0."""
    return (f"CASE kind WHEN 'order' THEN coalesce(place{s} = 1, 0) "
            f"ELSE coalesce(winner = {_side(s, n)}, 0) END")  # fmt: skip


def _result(s: int) -> str:
    """SQL: 1 when the match has a result for seat ``s`` (a winner, or its place)."""
    return f"CASE kind WHEN 'order' THEN place{s} IS NOT NULL ELSE winner IS NOT NULL END"


def _points(s: int, n: int) -> str:
    """SQL: the final score of seat ``s``'s side."""
    return f"score{_side(s, n)}"


def _margin(s: int, n: int) -> str:
    """SQL: seat ``s``'s side's final score minus the best other side's; NULL when forfeited."""
    side = _side(s, n)
    others = [f"score{t}" for t in range(2 if n == 4 else 3) if t != side]
    best = others[0] if len(others) == 1 else f"max({', '.join(others)})"
    return f"CASE WHEN fault IS NULL THEN score{side} - {best} END"


def _union(parts: list[str]) -> str:
    return " UNION ALL ".join(parts)


def seat_results(store: Store) -> Rows:
    """Per agent and seat: ``matches``, ``won``, ``lost``, ``no_result``, ``points`` (the
    sum of its side's final scores), ``place_sum`` and ``placed`` (the sum and count of its
    known places), ``forfeits`` (matches it forfeited by a fault), ``margin_sum`` and
    ``margined`` (its margins' sum and count, forfeits left out) and ``deals``."""
    n = _players(store)
    if not n:
        return []
    parts = [
        f"SELECT seat{s} AS agent, {s} AS seat, {_won(s, n)} AS won, {_result(s)} AS result, "
        f"{_points(s, n)} AS points, place{s} AS place, coalesce(forfeit_seat = {s}, 0) AS forfeit, "
        f"{_margin(s, n)} AS margin, deals FROM match_rows"
        for s in range(n)
    ]
    return store._rows(
        "SELECT agent, seat, count(*) AS matches, sum(won) AS won, sum(result) - sum(won) AS lost, "
        "count(*) - sum(result) AS no_result, sum(points) AS points, coalesce(sum(place), 0) AS place_sum, "
        "count(place) AS placed, sum(forfeit) AS forfeits, coalesce(sum(margin), 0) AS margin_sum, "
        f"count(margin) AS margined, sum(deals) AS deals FROM ({_union(parts)}) "
        "GROUP BY agent, seat ORDER BY agent, seat"
    )


def partner_results(store: Store) -> Rows:
    """Per agent and partner (the four-handed games; empty otherwise): ``matches``,
    ``won``, ``no_result``, ``margin_sum`` and ``margined`` (the team's lead, forfeits left out)."""
    n = _players(store)
    if n != 4:
        return []
    parts = [
        f"SELECT seat{s} AS agent, seat{(s + 2) % 4} AS partner, {_won(s, n)} AS won, {_result(s)} AS result, "
        f"{_margin(s, n)} AS margin FROM match_rows"
        for s in range(n)
    ]
    return store._rows(
        "SELECT agent, partner, count(*) AS matches, sum(won) AS won, count(*) - sum(result) AS no_result, "
        f"coalesce(sum(margin), 0) AS margin_sum, count(margin) AS margined FROM ({_union(parts)}) "
        "GROUP BY agent, partner ORDER BY agent, partner"
    )


def opponent_results(store: Store) -> Rows:
    """Per agent and opponent (a seat of another side): ``matches`` they met in, ``won``
    (the agent's side won), ``no_result``, and by their places ``ahead`` (the agent
    finished before the opponent), ``level`` (the same place) and ``behind``."""
    n = _players(store)
    if not n:
        return []
    parts = []
    for s in range(n):
        for o in range(n):
            if o == s or _side(o, n) == _side(s, n):
                continue
            parts.append(
                f"SELECT seat{s} AS agent, seat{o} AS opponent, {_won(s, n)} AS won, {_result(s)} AS result, "
                f"place{s} < place{o} AS ahead, place{s} = place{o} AS level, place{s} > place{o} AS behind "
                "FROM match_rows"
            )
    return store._rows(
        "SELECT agent, opponent, count(*) AS matches, sum(won) AS won, count(*) - sum(result) AS no_result, "
        "coalesce(sum(ahead), 0) AS ahead, coalesce(sum(level), 0) AS level, coalesce(sum(behind), 0) AS behind "
        f"FROM ({_union(parts)}) GROUP BY agent, opponent ORDER BY agent, opponent"
    )


def margin_counts(store: Store) -> Rows:
    """How often each agent finished with each margin (forfeits left out): rows of
    ``agent``, ``margin`` and ``count``."""
    n = _players(store)
    if not n:
        return []
    parts = [f"SELECT seat{s} AS agent, {_margin(s, n)} AS margin FROM match_rows" for s in range(n)]
    return store._rows(
        f"SELECT agent, margin, count(*) AS count FROM ({_union(parts)}) WHERE margin IS NOT NULL "
        "GROUP BY agent, margin ORDER BY agent, margin"
    )


def deal_gain_counts(store: Store) -> Rows:
    """How often each agent's side gained each amount in a deal: rows of ``agent``,
    ``gain`` and ``count``. Deals nobody bid in (``all-pass``: dealt again) are left out;
    in dealer-sits-out, per match seat (older stores: see the module's words)."""
    n = _players(store)
    if not n:
        return []
    parts = []
    for s in range(n):
        side = _side(s, n)
        if _form(store) == "dealer_sits_out":
            gain = (f"coalesce(d.gain{s}, CASE WHEN d.winner IS NOT NULL AND CAST(substr(d.seat_map, 1 + 2 * d.winner, "
                    f"1) AS INTEGER) = {s} THEN d.game_points + coalesce(d.carried, 0) ELSE 0 END)")  # fmt: skip
            where = f"(d.gain{s} IS NOT NULL OR instr(d.seat_map, '{s}') > 0)"
        else:
            gain = f"d.gain{side} + CASE WHEN d.winner = {side} THEN coalesce(d.carried, 0) ELSE 0 END"
            where = f"d.reason != 'all-pass' AND d.gain{side} IS NOT NULL"
        parts.append(
            f"SELECT m.seat{s} AS agent, {gain} AS gain FROM deal_rows d JOIN match_rows m ON m.n = d.match_n "
            f"WHERE {where}"
        )
    return store._rows(
        f"SELECT agent, gain, count(*) AS count FROM ({_union(parts)}) GROUP BY agent, gain ORDER BY agent, gain"
    )


def bid_counts(store: Store) -> Rows:
    """The contracts of the bidding games, counted: rows of ``agent`` (the bidder), ``bid``
    (its level; the moon is 5), ``made`` (1 when the bidder's side gained in the deal,
    0 when it was set: a set bid scores minus the bid) with ``count`` and ``gain`` (the
    sum of the bidder's side's gains). Empty for games without bidding."""
    n = _players(store)
    if not n:
        return []
    bidder = " ".join(f"WHEN {s} THEN m.seat{s}" for s in range(n))
    gain = " ".join(f"WHEN {s} THEN d.gain{_side(s, n)}" for s in range(n))
    return store._rows(
        f"SELECT agent, bid, gain > 0 AS made, count(*) AS count, sum(gain) AS gain FROM ("
        f" SELECT CASE d.bidder {bidder} END AS agent, d.bid AS bid, CASE d.bidder {gain} END AS gain"
        " FROM deal_rows d JOIN match_rows m ON m.n = d.match_n WHERE d.bidder IS NOT NULL"
        ") GROUP BY agent, bid, made ORDER BY agent, bid, made"
    )


def auction_counts(store: Store) -> Rows:
    """Every call of the auctions of the bidding games, counted: rows of ``agent``, ``bid``
    (its level, the moon 5; 0 for a pass) and ``count``. From the dealer's left each seat
    calls once, so a deal's first actions are its auction, a seat each; their codes are
    built in and below 128, a byte each (`arena.results.store`), so SQL reads them from the
    stored bytes without decoding the deal. Empty for games without bidding."""
    n = _players(store)
    if not n or _form(store) not in ("cutthroat", "bidding"):
        return []
    calls = store.db.execute(
        "SELECT code, action FROM action_codes WHERE code < 128 AND (action = 'pass' OR action LIKE 'bid:%')"
    ).fetchall()
    if not calls:
        return []
    level = " ".join(f"WHEN x'{code:02x}' THEN {0 if a == 'pass' else int(a[4:])}" for code, a in calls)
    seat = " ".join(f"WHEN {s} THEN m.seat{s}" for s in range(n))
    parts = [
        f"SELECT CASE (d.dealer + {1 + i}) % {n} {seat} END AS agent, CASE substr(d.actions, {1 + i}, 1) {level} "
        "END AS bid FROM deal_rows d JOIN match_rows m ON m.n = d.match_n"
        for i in range(n)
    ]
    return store._rows(
        f"SELECT agent, bid, count(*) AS count FROM ({_union(parts)}) WHERE bid IS NOT NULL "
        "GROUP BY agent, bid ORDER BY agent, bid"
    )


def latency_chunks(store: Store, size: int = 50_000) -> Iterator[list[tuple[Any, ...]]]:
    """Every match's agents (``seat0`` to the last seat) and its ``latencies`` as stored
    (`arena.results.store.unpack_ms` reads them, a list per seat), in lists of at most ``size``."""
    n = _players(store)
    if not n:
        return
    cur = store.db.execute(f"SELECT {', '.join(f'seat{s}' for s in range(n))}, latencies FROM match_rows")
    while chunk := cur.fetchmany(size):
        yield chunk
