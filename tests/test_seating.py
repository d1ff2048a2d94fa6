"""Fair seatings for three- and four-handed games (arena.tournament.seating): each deck in
every rotation, partnerships swapped and rotated, tables from the pool, pure seeds."""

from __future__ import annotations

import collections
import itertools

import pytest

from arena.game import ALL_PRESETS, Match, get_variant
from arena.tournament.seating import seatings, table_schedule, tables
from arena.tournament.spec import MatchSpec

POOL = ["random", "greedy", "heuristic", "node-greedy", "c-cautious"]


def by_set(specs: list[MatchSpec]) -> dict[tuple[str, int], list[MatchSpec]]:
    out = collections.defaultdict(list)
    for s in specs:
        out[s.pairing, s.pair_index].append(s)
    return out


def test_three_handed_each_deck_is_played_in_every_rotation():
    specs = table_schedule(POOL, 3, "round-robin", 2, root=7)
    assert len({s.pairing for s in specs}) == 10 and len(specs) == 10 * 2 * 3
    for (table, _), group in by_set(specs).items():
        assert len({s.seed for s in group}) == 1  # one deck a set
        names = table.split("~")
        for seat in range(3):  # each agent holds each seat's cards once
            assert sorted(s.seats[seat] for s in group) == sorted(names)
        # a rotation keeps who sits on whose left
        lefts = {tuple((s.seats[i], s.seats[(i + 1) % 3]) for i in range(3)) for s in group}
        assert len({frozenset(x) for x in lefts}) == 1


def test_three_handed_permutations_change_the_neighbours_too():
    group = seatings(("a", "b", "c"), "permutations")
    assert len(group) == 6 and len({seats for seats, _ in group}) == 6
    assert sorted(seats for seats, _ in group) == sorted(itertools.permutations("abc"))
    with pytest.raises(ValueError, match="seatings must be one of"):
        seatings(("a", "b", "c"), "random")


def test_partnerships_are_swapped_and_rotated_so_everyone_plays_with_and_against_everyone():
    specs = table_schedule(POOL, 4, "round-robin", 1, root=3)
    assert len({s.pairing for s in specs}) == 5 and len(specs) == 5 * 6
    together = collections.Counter()
    against = collections.Counter()
    for (table, _), group in by_set(specs).items():
        assert len(group) == 6 and len({s.seed for s in group}) == 1
        names = table.split("~")
        with_here, against_here = collections.Counter(), collections.Counter()
        for s in group:
            x, y = s.teams
            assert (s.seats[0], s.seats[2]) == x and (s.seats[1], s.seats[3]) == y  # partners opposite
            with_here.update(frozenset(p) for p in (x, y))
            against_here.update(frozenset((i, j)) for i in x for j in y)
        # within one set: each pair partners twice and opposes four times; each team in both seat pairs
        pairs = [frozenset(p) for p in itertools.combinations(names, 2)]
        assert all(with_here[p] == 2 and against_here[p] == 4 for p in pairs)
        together.update(with_here)
        against.update(against_here)
        teams_at_02 = collections.Counter(frozenset(s.teams[0]) for s in group)
        teams_at_13 = collections.Counter(frozenset(s.teams[1]) for s in group)
        assert teams_at_02 == teams_at_13 and set(teams_at_02.values()) == {1}
    for a, b in itertools.combinations(POOL, 2):  # over the round robin: with and against everyone
        assert together[frozenset((a, b))] > 0 and against[frozenset((a, b))] > 0


def test_gauntlet_and_head_to_head_choose_their_tables():
    g = tables(POOL, 3, "gauntlet", challenger="heuristic")
    assert len(g) == 6 and all("heuristic" in t for t in g)
    assert tables(POOL[:4], 4, "head-to-head") == [tuple(sorted(POOL[:4]))]
    with pytest.raises(ValueError, match="needs exactly 4 agents, got 5"):
        tables(POOL, 4, "head-to-head")
    with pytest.raises(ValueError, match="needs at least 4 agents, got 3"):
        tables(POOL[:3], 4, "round-robin")
    with pytest.raises(ValueError, match="challenger 'expert' is not one of the agents"):
        tables(POOL, 3, "gauntlet", challenger="expert")
    with pytest.raises(ValueError, match="must be distinct"):
        tables(["a", "a", "b"], 3, "round-robin")


def test_the_schedule_is_a_pure_function_of_the_config():
    a = table_schedule(POOL, 4, "round-robin", 2, root=11)
    b = table_schedule(list(reversed(POOL)), 4, "round-robin", 2, root=11)
    assert a == b  # the order of the agents in a config changes nothing
    assert len({s.match_id for s in a}) == len(a)
    c = table_schedule(POOL, 4, "round-robin", 2, root=12)
    assert {s.seed for s in a}.isdisjoint({s.seed for s in c})
    assert [s.pair_index for s in a] == sorted(s.pair_index for s in a)  # set-major


@pytest.mark.parametrize("preset", [p for p in ALL_PRESETS if get_variant(p).players > 2])
def test_every_seating_of_a_set_deals_the_same_cards_to_the_same_seats(preset):
    """What makes it duplicate play: the seed fixes the deck, so the seat (not the agent)
    gets the cards, and each agent gets each seat's cards in turn."""
    v = get_variant(preset)
    specs = table_schedule(POOL, v.players, "round-robin", 1, root=5)[: len(seatings(POOL[: v.players]))]
    hands = []
    for s in specs:
        state = Match(v, s.seed).new_deal()
        hands.append([state.hand[seat] for seat in range(state.players)])
    assert all(h == hands[0] for h in hands)


def test_over_two_deck_sets_every_agent_holds_every_seat_with_every_partner():
    specs = table_schedule(["a", "b", "c", "d"], 4, "round-robin", 2, root=3)
    held = collections.Counter()
    for s in specs:
        for seat, name in enumerate(s.seats):
            partner = s.seats[(seat + 2) % 4]
            held[name, partner, seat] += 1
    # 4 agents x 3 partners x 4 seats, each exactly once over the two sets
    assert len(held) == 4 * 3 * 4 and set(held.values()) == {1}
    first, second = specs[:6], specs[6:]
    assert [s.teams for s in second] == [tuple(t[::-1] for t in s.teams) for s in first]  # members the other way
