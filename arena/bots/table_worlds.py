"""Worlds of a seat's information set in the three- and four-handed forms, as engine states.

A world deals the cards the seat has not seen to the other hands (and to F3.2's widow
while it is face down), keeping to everything public: hand sizes, the cards known to be
in a hand (a shown marriage, the trump card), and what the rules force out of play (a
seat that did not follow suit holds none of it, one that did not beat a card where it
had to holds nothing higher: `TableFacts`). The world is then built the one way that is
surely faithful to the engine: the deal is laid out from each seat's original cards (its
hand now plus what it has played), and the public actions are replayed on it, checked
(bids, the trump decision, marriages and passes, every card). A world whose replay is not
legal, or does not arrive at the seat's decision, is drawn again; `tests/test_table_expert.py`
checks over real matches that a world's observation for the seat is the seat's own.

Pure: no clocks, no I/O; the random draws come from the caller's generator.
"""

from __future__ import annotations

import random
from typing import Any

from ..game import Variant, get_variant
from ..game.actions import BID, MARRY, PASS, TRUMP, play_action
from ..game.cards import SUITS, cards_of_32, parse_card
from ..game.table import TableState
from ..game.table_deal import table_from_cards, table_pack
from .table_strategies import TableFacts

__all__ = ["NamingWorlds", "TableWorlds", "public_actions"]

#: Draws of one world before giving up on it (a dead end of the dealing, or a replay the
#: rules refuse).
TRIES = 40


def public_actions(obs: dict[str, Any], variant: Variant) -> list[int]:
    """The actions of the deal so far, in order, as every seat saw them (action ids): the
    bids, the trump decision, and trick by trick the leader's marriage, its card, the
    partner's marriage or pass (F4.1), the other cards."""
    form = _form(variant)
    acts: list[int] = []
    for b in obs["bids"]:
        acts.append(BID + b["bid"] - 1 if b["bid"] else PASS)
    by = obs["trump_set_by"]
    if form == "pagat3" and by is not None:
        acts.append(TRUMP + SUITS.index(obs["trump"]) if by["named"] else PASS)
    meld = form == "pagat4"
    marriages: dict[int, list[dict]] = {}
    for m in obs["marriages"]:
        marriages.setdefault(m["trick"], []).append(m)
    cur = obs["current_trick"]
    tricks = [*obs["tricks"], *([cur] if cur else [])]
    for i, t in enumerate(tricks):
        leader = t["leader"]
        shown = marriages.get(i, [])
        for m in shown:
            if m["seat"] == leader:
                acts.append(MARRY + SUITS.index(m["suit"]))
        cards = t["cards"]
        for k, (_s, c) in enumerate(cards):
            acts.append(play_action(parse_card(c)))
            if k == 0 and meld:
                partner = [m for m in shown if m["seat"] != leader]
                acts.append(MARRY + SUITS.index(partner[0]["suit"]) if partner else PASS)
                if len(cards) == 1 and obs["phase"] == "meld":
                    acts.pop()  # the partner's meld is the decision now
    n = len(obs["tricks"])
    if not cur and obs["phase"] == "lead":
        for m in marriages.get(n, []):
            acts.append(MARRY + SUITS.index(m["suit"]))  # shown on this lead, its card to come
    return acts


def _form(v: Variant) -> str:
    if v.form == "pagat":
        return f"pagat{v.players}"
    return v.form


def _laid_out(
    variant: Variant, hands: list[list[int]], obs: dict[str, Any], widow: list[int] | None = None
) -> TableState:
    """The deal laid out from each seat's cards in the order dealt (`table_from_cards`),
    with what the seat sees of the match: the score, the carry and the deal's number."""
    st = table_from_cards(variant, hands, widow or (), obs["dealer"], score=tuple(obs["score"]))
    st.carry = obs["carry"]
    st.deal_no = obs["deal"]
    return st


class NamingWorlds:
    """The worlds of F3.1's trump decision: the seat to name has seen only its first three
    cards, so every other card of the pack is dealt at random, the rest of its own hand
    included (its fourth card is the one turned up if it passes). `sample(rng)` gives the
    deal at the decision."""

    def __init__(self, obs: dict[str, Any], variant: Variant | None = None):
        self.variant = variant if variant is not None else get_variant(obs["variant"])
        if obs["phase"] != "name":
            raise ValueError(f"phase: NamingWorlds is for the trump decision ('name'), got {obs['phase']!r}")
        self.obs = obs
        self.me = obs["seat"]
        self.mine = [parse_card(c) for c in obs["hand"]]
        self.rest = [c for c in table_pack(self.variant) if c not in self.mine]

    def sample(self, rng: random.Random) -> TableState:
        cards = self.rest[:]
        rng.shuffle(cards)
        size = self.variant.hand_size
        hands = []
        for s in range(self.variant.players):
            k = size - len(self.mine) if s == self.me else size
            hands.append((self.mine if s == self.me else []) + cards[:k])
            del cards[:k]
        return _laid_out(self.variant, hands, self.obs)


class TableWorlds:
    """The worlds of one table decision: `sample(rng)` deals one and replays the deal.
    ``variant`` is the rule set (the match's, from ``hello``); by default the preset the
    observation names."""

    def __init__(self, obs: dict[str, Any], variant: Variant | None = None):
        self.variant = variant = variant if variant is not None else get_variant(obs["variant"])
        self.me = me = obs["seat"]
        self.n = n = obs["players"]
        self.obs = obs
        self.form = _form(variant)
        facts = TableFacts(obs)
        self.hand = facts.hand
        #: Each seat's cards played so far, in the order played.
        self.played: list[list[int]] = [[] for _ in range(n)]
        cur = obs["current_trick"]
        for t in [*obs["tricks"], *([cur] if cur else [])]:
            for s, c in t["cards"]:
                self.played[s].append(parse_card(c))
        located = 0
        self.known = [0] * n
        for s in range(n):
            if s != me:
                self.known[s] = facts.known[s] & facts.unseen
                located |= self.known[s]
        self.free = facts.unseen & ~located  # the cards to deal out
        #: (seat, cards it may hold of ``free``, how many it needs); seat -1 is the widow.
        self.slots: list[tuple[int, int, int]] = []
        for s in range(n):
            if s == me:
                continue
            pool, _ = facts.possible(s)
            need = obs["hand_sizes"][s] - self.known[s].bit_count()
            self.slots.append((s, pool & self.free, need))
        self.widow_hidden = self.variant.form == "cutthroat" and obs["widow"] is None
        if self.widow_hidden:
            self.slots.append((-1, self.free, self.free.bit_count() - sum(k for _, _, k in self.slots)))
        self.widow = [parse_card(c) for c in obs["widow"]] if obs["widow"] else []
        turn = obs["turn_card"]
        self.turn = (turn["seat"], parse_card(turn["card"])) if turn else None
        self.actions = public_actions(obs, variant)

    def deal(self, rng: random.Random) -> dict[int, int] | None:
        """The hidden cards dealt out: seat (-1 the widow) -> its cards; None at a dead end.
        Card by card, the most constrained first, each to a seat that may hold it, in
        proportion to the room it has left."""
        room = {s: k for s, _, k in self.slots}
        pools = {s: p for s, p, _ in self.slots}
        got = dict.fromkeys(room, 0)
        cards = list(cards_of_32(self.free))
        rng.shuffle(cards)
        cards.sort(key=lambda c: sum(1 for s in room if pools[s] >> c & 1))
        for c in cards:
            seats = [s for s in room if room[s] and pools[s] >> c & 1]
            if not seats:
                return None
            total = sum(room[s] for s in seats)
            x = rng.random() * total
            for s in seats:
                x -= room[s]
                if x < 0:
                    break
            got[s] |= 1 << c
            room[s] -= 1
        return got

    def sample(self, rng: random.Random) -> TableState | None:
        """A world at the decision (the engine state, the seat to act), or None after
        `TRIES` failed draws."""
        for _ in range(TRIES):
            got = self.deal(rng)
            if got is None:
                continue
            st = self._build(got)
            if st is not None:
                return st
        return None

    def _build(self, got: dict[int, int]) -> TableState | None:
        n, me = self.n, self.me
        hands = []
        for s in range(n):
            now = self.hand if s == me else got[s] | self.known[s]
            cards = self.played[s] + list(cards_of_32(now))
            if self.turn is not None and self.turn[0] == s:  # the trump card where the deal put it
                cards.remove(self.turn[1])
                at = 3 if self.form == "pagat3" else len(cards)
                cards.insert(at, self.turn[1])
            hands.append(cards)
        widow = list(cards_of_32(got[-1])) if self.widow_hidden else self.widow
        try:
            st = _laid_out(self.variant, hands, self.obs, widow)
            for a in self.actions:
                st.apply_action(a)
        except ValueError:  # IllegalActionError and the deal's own checks
            return None
        if st.to_act != me or st.phase_name != self.obs["phase"]:
            return None
        return st
