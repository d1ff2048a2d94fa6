"""Whole matches between in-process strategies, and the tallies ``arena selfplay`` prints.

The strategies are every built-in one: ``random`` and ``greedy`` (`arena.bots.strategies`),
``heuristic`` (`arena.bots.heuristic`) and ``expert`` (`arena.bots.search`: it searches, so it is
much slower), the brains of the bundled Python agents. Match ``i`` of a run with root seed
``S`` uses the match seed ``derive_seed(S, "match", i)`` and puts the first strategy in
seat ``i % 2``, so both strategies sit in both seats equally often. Each strategy gets its
own seed derived from the root, never the deal seeds. A strategy played against itself is
tallied as ``NAME#1`` (the first named) and ``NAME#2``.

The three- and four-handed presets (`arena.game.TABLE_PRESETS`) are played by
``random``, ``greedy``, ``heuristic`` and ``expert`` (`arena.bots.table_expert`), in
their table forms (`table_strategy`, `arena.bots.table_strategies`): two strategies take
turns round the table (seat ``s`` of match ``i`` plays strategy ``(s + i) % 2``, so
partners opposite play the same one), and a match is won by the strategy of its winning
seat, team, or first finisher.
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..bots.strategies import STRATEGIES, Strategy, make_strategy
from ..bots.table_strategies import TableGreedy, TableHeuristic
from ..game import Match, Variant, derive_seed, get_variant, observation

#: Every built-in strategy, by name: what ``arena selfplay --agents`` accepts. The last two
#: measure: ``expert-oracle`` is shown the true state (`arena.bots.expert.OracleStrategy`),
#: ``expert-hand-oracle`` the opponent's hand only (`arena.bots.expert.HandOracleStrategy`).
STRATEGY_NAMES = (*STRATEGIES, "heuristic", "expert", "expert-oracle", "expert-hand-oracle")


#: The strategies that play the three- and four-handed forms.
TABLE_STRATEGY_NAMES = ("random", "greedy", "heuristic", "expert")


class TableRandom:
    """Uniform over the legal actions, but it bids only the lowest bid or passes (a random
    bidder is set nearly every hand, and its match would never reach the target)."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def __call__(self, obs: dict[str, Any], legal: list[str]) -> str:
        if obs["phase"] == "bid":
            legal = [a for a in legal if not a.startswith("bid:")] + [a for a in legal if a.startswith("bid:")][:1]
        return legal[int(self.rng.random() * len(legal))]


def table_strategy(name: str, seed: int) -> Strategy:
    """A strategy for the three- and four-handed forms; `ValueError` for one that has none."""
    if name == "random":
        return TableRandom(seed)
    if name == "greedy":
        return TableGreedy(seed)
    if name == "heuristic":
        return TableHeuristic(seed)
    if name == "expert":
        from ..bots.table_expert import TableExpert

        return TableExpert(seed)  # fixed work: the same play for the same seed
    raise ValueError(
        f"strategy {name!r} plays only the two-handed games; the three- and four-handed ones "
        f"are played by: {', '.join(TABLE_STRATEGY_NAMES)}"
    )


def make_player(name: str, seed: int, variant: Variant) -> Strategy:
    """A fresh built-in strategy by name (see `STRATEGY_NAMES`); `ValueError` for another name.
    The searching ones are imported only when asked for."""
    if variant.is_table:
        return table_strategy(name, seed)
    if name in STRATEGIES:
        return make_strategy(name, seed)
    if name == "heuristic":
        from ..bots.heuristic import HeuristicStrategy

        return HeuristicStrategy(seed)
    if name == "expert":
        from ..bots.search import ExpertStrategy

        # The agent's search (worlds weighted by its model of the opponent's lead), at fixed work.
        return ExpertStrategy(seed, variant=variant, infer=True, lead_model="value")
    if name == "expert-oracle":
        from ..bots.expert import OracleStrategy

        return OracleStrategy(seed, variant=variant)
    if name == "expert-hand-oracle":
        from ..bots.expert import HandOracleStrategy

        return HandOracleStrategy(seed, variant=variant)
    raise ValueError(f"unknown strategy {name!r}; built-in strategies: {', '.join(STRATEGY_NAMES)}")


@dataclasses.dataclass
class Tally:
    """What one strategy achieved over a run."""

    name: str
    matches_won: int = 0
    game_points: int = 0
    deals_won: int = 0
    deals_won_by_points: Counter = dataclasses.field(default_factory=Counter)  # 1, 2, 3 (+ carry)
    reasons: Counter = dataclasses.field(default_factory=Counter)  # why the deals it won ended


@dataclasses.dataclass
class SelfplayReport:
    variant: str
    seed: int
    matches: int
    deals: int
    drawn_deals: int
    tallies: list[Tally]

    def to_dict(self) -> dict:
        # Not dataclasses.asdict: it rebuilds a Counter from (key, value) pairs as keys.
        tallies = [
            {
                "name": t.name,
                "matches_won": t.matches_won,
                "game_points": t.game_points,
                "deals_won": t.deals_won,
                "deals_won_by_points": {str(k): v for k, v in sorted(t.deals_won_by_points.items())},
                "reasons": dict(sorted(t.reasons.items())),
            }
            for t in self.tallies
        ]
        return {
            "variant": self.variant,
            "seed": self.seed,
            "matches": self.matches,
            "deals": self.deals,
            "drawn_deals": self.drawn_deals,
            "tallies": tallies,
        }


def play_match(variant: Variant | str, seed: int, players: Sequence[Strategy]) -> Match:
    """Play one match to its end; ``players[s]`` chooses for match seat ``s`` (in F3.3 a
    deal's seats are mapped to match seats by `Match.seats`). A player that ``sees_state``
    (the measuring oracle) is handed the true state before each of its decisions: only
    here, in process; an agent process only ever gets its observation."""
    match = Match(variant, seed)
    while not match.is_over():
        state = match.new_deal()
        seats = match.seats
        while not state.is_over():
            seat = state.current_player()
            legal = state.legal_action_strings()
            player = players[seats[seat]]
            if getattr(player, "sees_state", False):
                player.state = state
            state.apply_action(player(observation(state, seat), legal))
        match.finish_deal()
    return match


def labels(names: Sequence[str]) -> list[str]:
    """Names for the tallies, told apart when a strategy plays itself: ``greedy#1``, ``greedy#2``."""
    if len(set(names)) == len(names):
        return list(names)
    return [f"{n}#{i + 1}" for i, n in enumerate(names)]


def selfplay(variant: Variant | str, names: Sequence[str], matches: int, seed: int) -> SelfplayReport:
    """Play ``matches`` matches between two named strategies and tally the results (a
    strategy against itself: tallies ``NAME#1`` and ``NAME#2``, see `labels`)."""
    variant = get_variant(variant)
    if len(names) != 2:
        raise ValueError(f"--agents needs exactly two strategies, got {len(names)}")
    if matches < 1:
        raise ValueError(f"--matches must be at least 1, got {matches}")
    if variant.players > 2:
        return _table_selfplay(variant, names, matches, seed)
    strategies = [make_player(n, derive_seed(seed, "strategy", i, n), variant) for i, n in enumerate(names)]
    tallies = [Tally(name=n) for n in labels(names)]
    deals = drawn = 0
    for i in range(matches):
        order = (0, 1) if i % 2 == 0 else (1, 0)  # order[seat] = index of the strategy
        match = play_match(variant, derive_seed(seed, "match", i), [strategies[k] for k in order])
        tallies[order[match.result.winner]].matches_won += 1
        carry = 0
        for state in match.deals:
            r = state.result
            deals += 1
            if r.winner is None:
                drawn += 1
                carry += variant.draw_carry
                continue
            t = tallies[order[r.winner]]
            t.deals_won += 1
            t.game_points += r.game_points + carry
            t.deals_won_by_points[r.game_points] += 1
            t.reasons[r.reason] += 1
            carry = 0
    return SelfplayReport(variant.name, seed, matches, deals, drawn, tallies)


def _table_selfplay(variant: Variant, names: Sequence[str], matches: int, seed: int) -> SelfplayReport:
    """`selfplay` for three and four seats: strategy ``(s + i) % 2`` in seat ``s`` of match ``i``."""
    strategies = [make_player(n, derive_seed(seed, "strategy", i, n), variant) for i, n in enumerate(names)]
    tallies = [Tally(name=n) for n in labels(names)]
    n_seats = variant.players
    deals = drawn = 0
    for i in range(matches):
        order = [(s + i) % 2 for s in range(n_seats)]  # order[seat] = index of the strategy
        match = play_match(variant, derive_seed(seed, "match", i), [strategies[k] for k in order])
        tallies[order[match.result.winner]].matches_won += 1  # a team's index is its first seat
        for state in match.deals:
            r = state.result
            deals += 1
            if r.winner is None:
                drawn += 1
                continue
            # Whose side won: a table deal names a side (team t is seats t and t + 2), an F3.3
            # deal a seat of the deal.
            seat = r.winner if variant.is_table else match.deal_seats[match.deals.index(state)][r.winner]
            t = tallies[order[seat]]
            t.deals_won += 1
            t.game_points += r.game_points
            t.deals_won_by_points[r.game_points] += 1
            t.reasons[r.reason] += 1
    return SelfplayReport(variant.name, seed, matches, deals, drawn, tallies)


def format_report(rep: SelfplayReport) -> str:
    """A plain-text table of a selfplay run."""
    w = max(8, *(len(t.name) for t in rep.tallies))
    lines = [
        f"selfplay: {rep.matches} matches, {rep.deals} deals ({rep.drawn_deals} drawn), "
        f"variant {rep.variant}, seed {rep.seed}",
        "",
        f"{'strategy':<{w}}  {'matches':>7}  {'win %':>6}  {'game pts':>8}  {'deals won':>9}  "
        f"{'1 pt':>6}  {'2 pts':>6}  {'3 pts':>6}",
    ]
    for t in rep.tallies:
        won = t.deals_won or 1
        dist = [f"{100 * t.deals_won_by_points[k] / won:5.1f}%" for k in (1, 2, 3)]
        lines.append(
            f"{t.name:<{w}}  {t.matches_won:>7}  {100 * t.matches_won / rep.matches:>5.1f}%  "
            f"{t.game_points:>8}  {t.deals_won:>9}  {dist[0]:>6}  {dist[1]:>6}  {dist[2]:>6}"
        )
    lines += ["", "game points per deal won: the share of each strategy's won deals worth 1, 2 or 3", ""]
    lines.append("how the deals each strategy won ended:")
    for t in rep.tallies:
        parts = ", ".join(f"{k} {v}" for k, v in t.reasons.most_common())
        lines.append(f"  {t.name:<{w}}  {parts}")
    return "\n".join(lines)
