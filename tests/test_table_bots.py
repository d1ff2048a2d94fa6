"""The table strategies (arena.bots.table_strategies): legal play in every table game,
reproducible for a seed, the strength order random < greedy < heuristic measured over
seeded matches, partner play and bids on positions built by hand; and the bundled
greedy and heuristic agents passing ``arena check`` at three- and four-handed tables."""

from __future__ import annotations

from math import comb

import pytest

from arena.bots.table_strategies import TableGreedy, TableHeuristic
from arena.game import TABLE_PRESETS, Match, derive_seed, get_variant, observation
from arena.game.table_deal import table_from_cards
from arena.play.selfplay import TableRandom, play_match

MAKERS = {"random": TableRandom, "greedy": TableGreedy, "heuristic": TableHeuristic}


def _drive(preset: str, seed: int, players: list, decisions: list | None = None) -> Match:
    """One match, every decision of a `TableHeuristic` checked to be its own (not the
    fallback it takes on a malformed observation) and legal; the engine checks the rest."""
    match = Match(preset, seed)
    while not match.is_over():
        state = match.new_deal()
        seats = match.seats
        while not state.is_over():
            seat = state.current_player()
            legal = state.legal_action_strings()
            obs = observation(state, seat)
            player = players[seats[seat]]
            if isinstance(player, TableHeuristic) and "players" in obs:
                assert player._choose(obs, legal) in legal, (preset, seed, obs, legal)
            action = player(obs, legal)
            if decisions is not None:
                decisions.append(action)
            state.apply_action(action)
        match.finish_deal()
    return match


@pytest.mark.parametrize("preset", list(TABLE_PRESETS))
def test_every_action_is_legal_in_every_table_game(preset):
    n = get_variant(preset).players
    for i in range(24):
        names = ["heuristic", "greedy", "random", "heuristic"][:n] if i % 2 else ["heuristic"] * n
        players = [MAKERS[name](derive_seed(5, "p", i, s)) for s, name in enumerate(names)]
        players = players[i % n :] + players[: i % n]
        match = _drive(preset, derive_seed(5, "m", i), players)
        assert match.is_over() or len(match.deals) > 0


@pytest.mark.parametrize("preset", ["three-cutthroat", "four-bidding", "three-sitout"])
def test_deterministic_for_a_seed(preset):
    def run() -> list[str]:
        n = get_variant(preset).players
        out: list[str] = []
        _drive(preset, 3, [TableHeuristic(s) for s in range(n)], out)
        return out

    assert run() == run()


# -- strength ------------------------------------------------------------------------------------
def _duel(preset: str, a: str, b: str, seeds: int) -> tuple[int, int]:
    """Matches won by ``a`` and by ``b`` over ``seeds`` deals of cards, each played twice
    with the seats swapped (``a`` in the even seats, then in the odd ones: a team game puts
    each strategy in both teams, a three-handed one gives each the two seats once)."""
    v = get_variant(preset)
    wins = [0, 0]
    for i in range(seeds):
        seed = derive_seed(17, "match", i)
        for flip in (0, 1):
            strategies = [MAKERS[a](derive_seed(17, "a", i)), MAKERS[b](derive_seed(17, "b", i))]
            order = [(s + flip) % 2 for s in range(v.players)]  # order[seat]: which strategy
            result = play_match(v, seed, [strategies[k] for k in order]).result
            if result.winner is not None:
                wins[order[result.winner]] += 1
    return wins[0], wins[1]


def _p_value(won: int, lost: int) -> float:
    """One-sided sign test: the chance of ``won`` or more of ``won + lost`` at even odds."""
    n = won + lost
    return sum(comb(n, k) for k in range(won, n + 1)) / 2**n


#: Seeds (each played twice, seats swapped) per table game: enough for p < 0.01 both ways.
STRENGTH_SEEDS = {"three-pagat": 120, "three-cutthroat": 20, "three-sitout": 25, "four-pagat": 200,
                  "kreuzmariage": 150, "four-bidding": 20}  # fmt: skip


@pytest.mark.parametrize("preset", list(TABLE_PRESETS))
@pytest.mark.parametrize(("a", "b"), [("heuristic", "greedy"), ("greedy", "random")])
def test_strength_order(preset, a, b):
    seeds = STRENGTH_SEEDS[preset]
    won, lost = _duel(preset, a, b, seeds)
    p = _p_value(won, lost)
    print(f"{preset}: {a} {won} - {lost} {b} over {2 * seeds} matches (p = {p:.2g})")
    assert won > lost and p < 0.01, (preset, a, won, b, lost, p)


# -- partner play, bids and trumps on built positions ---------------------------------------
def _obs(state, seat: int | None = None) -> tuple[dict, list[str]]:
    seat = state.current_player() if seat is None else seat
    return observation(state, seat), state.legal_action_strings()


def test_throws_its_ten_on_the_partners_winning_ace():
    # four-pagat, trumps spades: seat 1 leads the KH, partner (2) takes it with the AH, seat 3
    # follows; seat 0, last to play, may throw the TH or the JH: the ten goes to its partner.
    st = table_from_cards("four-pagat", [["TH", "JH"], ["KH", "9C"], ["AH", "QC"], ["QH", "KC"]],
                          trump="S", leader=1, tricks=[1, 1, 1, 1])  # fmt: skip
    for a in ("play:KH", "pass", "play:AH", "play:QH"):
        st.apply_action(a)
    obs, legal = _obs(st)
    assert obs["seat"] == 0 and set(legal) == {"play:TH", "play:JH"}
    assert TableHeuristic(1)(obs, legal) == "play:TH"
    assert TableGreedy(1)(obs, legal) == "play:JH"  # greedy throws its cheapest card


def test_does_not_overtrump_its_partners_trick_when_free_not_to():
    # head_partner = false: seat 0, void in clubs, need not beat its partner's trump; it keeps
    # the trump ace and plays its low trump on the trick its partner surely wins.
    v = get_variant("four-pagat").with_flags(head_partner=False)
    st = table_from_cards(v, [["AS", "9S"], ["AC", "9H"], ["JS", "9D"], ["TC", "KD"]],
                          trump="S", leader=1, tricks=[1, 1, 1, 1])  # fmt: skip
    for a in ("play:AC", "pass", "play:JS", "play:TC"):
        st.apply_action(a)
    obs, legal = _obs(st)
    assert obs["seat"] == 0 and set(legal) == {"play:AS", "play:9S"}
    assert TableHeuristic(1)(obs, legal) == "play:9S"


def test_leads_to_the_suit_its_partner_has_shown():
    # four-pagat, trumps hearts: seat 0 wins the first trick while its partner shows the
    # clubs marriage; with two nines left it leads the club, to the partner's K Q.
    hands = [["AS", "9C", "9D"], ["KS", "JD", "JC"], ["KC", "QC", "QS"], ["9S", "QD", "JH"]]
    st = table_from_cards("four-pagat", hands, trump="H", leader=0, tricks=[1, 1, 1, 1])
    for a in ("play:AS", "marry:C", "play:KS", "play:QS", "play:9S"):
        st.apply_action(a)
    obs, legal = _obs(st)
    assert obs["seat"] == 0 and obs["known_cards"][2] == ["KC", "QC"] and "play:9D" in legal
    assert TableHeuristic(1)(obs, legal) == "play:9C"
    assert TableGreedy(1)(obs, legal) == "play:9D"


def test_takes_a_rich_trick_from_the_opponents_cheaply():
    # three-pagat, trumps hearts: the ace and ten of clubs are on the table; seat 0, void in
    # clubs, trumps them with its nine, not its ace.
    st = table_from_cards("three-pagat", [["AH", "9H", "KS"], ["AC", "QD", "JS"], ["TC", "QS", "9S"]],
                          trump="H", leader=1, tricks=[1, 1, 1])  # fmt: skip
    st.apply_action("play:AC")
    st.apply_action("play:TC")
    obs, legal = _obs(st)
    assert obs["seat"] == 0 and set(legal) == {"play:AH", "play:9H"}
    assert TableHeuristic(1)(obs, legal) == "play:9H"


def _bid_position(hand: list[str]) -> tuple[dict, list[str]]:
    """four-bidding, seat 1 (the dealer's left) to bid first with ``hand``."""
    pack = [c for c in (r + s for s in "CDHS" for r in "ATKQJ9") if c not in hand]
    hands = [pack[0:6], hand, pack[6:12], pack[12:18]]
    st = table_from_cards("four-bidding", hands, dealer=0)
    return _obs(st)


def test_bids_with_a_strong_hand_and_passes_a_weak_one():
    obs, legal = _bid_position(["AS", "TS", "KS", "QS", "AH", "AD"])
    assert obs["phase"] == "bid" and TableHeuristic(1)(obs, legal).startswith("bid:")
    obs, legal = _bid_position(["9C", "JC", "9D", "JD", "9H", "JS"])
    assert TableHeuristic(1)(obs, legal) == "pass"


def test_names_trumps_only_with_a_good_suit():
    def naming(first: list[str]) -> str:
        pack = [c for c in (r + s for s in "CDHS" for r in "ATKQJ9") if c not in first]
        hands = [pack[0:8], first + pack[8:13], pack[13:21]]  # seat 1 sees its first three
        st = table_from_cards("three-pagat", hands, dealer=0)
        obs, legal = _obs(st)
        assert obs["phase"] == "name"
        return TableHeuristic(1)(obs, legal)

    assert naming(["AH", "TH", "KC"]) == "trump:H"
    assert naming(["9C", "JD", "QS"]) == "pass"


def test_leads_the_trump_marriage_suit_first_in_the_bidding_game():
    # four-bidding: the bidder's first card sets trumps; holding K Q of spades it shows the
    # marriage (40 before trumps are set) and so makes spades trumps.
    st = table_from_cards(
        "four-bidding",
        [["AC", "TC", "KC", "QC", "JC", "9C"], ["KS", "QS", "AS", "JS", "AH", "9D"],
         ["AD", "TD", "KD", "QD", "JD", "TH"], ["KH", "QH", "JH", "9H", "TS", "9S"]],
        dealer=0,
    )  # fmt: skip
    for a in ("bid:2", "pass", "pass", "pass"):
        st.apply_action(a)
    obs, legal = _obs(st)
    assert obs["seat"] == 1 and obs["phase"] == "lead"
    h = TableHeuristic(1)
    assert h(obs, legal) == "marry:S"
