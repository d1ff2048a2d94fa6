"""Small builders for hand-made positions, shared by the rules tests."""

from __future__ import annotations

from arena.game import State, card_str, deal_from_cards, get_variant, pack_of


def make(
    h0: str,
    h1: str,
    turn_up: str | None,
    variant: str = "sixty-six",
    *,
    top: str = "",
    out: str = "",
    **kw,
) -> State:
    """A position with seat 0 as forehand (dealer 1) unless ``leader`` is given.

    ``top`` lists the first face-down talon cards (top first); every other card not in
    a hand, the turn-up or ``out`` (cards already played) fills the talon below them in
    card-id order. With ``turn_up=None`` the talon is exhausted (pass ``trump=``).
    """
    v = get_variant(variant)
    hands = [h0.split(), h1.split()]
    used = set(hands[0]) | set(hands[1]) | set(top.split()) | set(out.split())
    talon: list[str] = []
    if turn_up is not None:
        used.add(turn_up)
        talon = top.split() + [card_str(c) for c in pack_of(v) if card_str(c) not in used]
    return deal_from_cards(v, hands, turn_up, talon, kw.pop("dealer", 1), **kw)


def do(state: State, actions: str) -> State:
    """Apply space-separated action strings (checked) and return the state."""
    for a in actions.split():
        state.apply_action(a)
    return state


def legal(state: State) -> list[str]:
    return state.legal_action_strings()
