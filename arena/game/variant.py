"""Rule variants as data: every flag of RULES.md sections 5 and 7, validated, with named presets.

``form`` picks the game of the family: ``two_handed`` (Sixty-Six and Schnapsen, with a
talon: `arena.game.state`), the no-talon table games ``pagat`` (F3.1 with 3 players, F4.1
with 4), ``cutthroat`` (F3.2), ``kreuzmariage`` (F4.2) and ``bidding`` (F4.3), all in
`arena.game.table`, and ``dealer_sits_out`` (F3.3: a match of two-handed deals, see
`arena.game.match`). `PRESETS` holds the two-handed presets that the referee plays;
`TABLE_PRESETS` the three- and four-handed ones; `ALL_PRESETS` both.

A `Variant` is frozen and hashable, so it can key caches and travel in a match record.
Build one from a preset and overrides (``Variant.from_dict({"base": "schnapsen",
"close_min_talon": 4})``); an unknown flag or a value outside its allowed set raises
`VariantError` with a one-line message naming the flag.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from typing import Any

from .cards import JACK, NINE


class VariantError(ValueError):
    """An unknown variant, an unknown flag, or a flag value outside its allowed set."""


#: Allowed values of each flag. ``target`` is any whole number from 1 to 99.
FLAG_VALUES: dict[str, tuple[Any, ...]] = {
    "form": ("two_handed", "pagat", "cutthroat", "dealer_sits_out", "kreuzmariage", "bidding"),
    "players": (2, 3, 4),
    "deck": (24, 20, 32),
    "next_dealer": ("alternate", "winner"),
    "exchange_rank": ("9", "J"),
    "exchange_needs_trick": (True, False),
    "exchange_timing": ("lead_only", "any_time"),
    "exchange_min_talon": (2, 4),
    "exchange_on_first_lead": (True, False),
    "exchange_on_close": ("none", "opponent", "any_with_trick"),
    "marriage_needs_trick": ("to_count", "to_declare"),
    "marriage_after_close": (False, True),
    "marriage_lead": ("either", "king_only"),
    "strict_must_head": (True, False),
    "strict_must_trump": (True, False),
    "close_before_draw": (True, False),
    "close_on_first_lead": (True, False),
    "close_min_talon": (2, 4),
    "close_score_basis": ("end", "at_close"),
    "failed_close": ("two_or_three", "three", "by_closer_count"),
    "beaten_closer": ("two_or_three", "two"),
    "false_claim": ("two_or_three", "two"),
    "out_timing": ("after_trick_or_meld", "any_time"),
    "auto_out": (False, True),
    "exhausted_rule": ("higher_total", "last_trick_wins"),
    "draw_carry": (0, 1),
    "schneider_at": (33, 31),
    "review_last_trick": (True, False),
    "shutout_double": (False, True),
    # Two-handed flags without a section-5 row (issue 16): closing at all, and the forced
    # announcement of a marriage whose K or Q is led with its partner in hand.
    "closing": (True, False),
    "forced_marriage": (False, True),
    # Section 7 (three- and four-handed forms).
    "head_partner": (True, False),
    "undertrump": ("required", "free"),
    "three_tie": ("share", "none"),
    "play_on": (True, False),
    "marriages": (True, False),
    "ten_of_trumps": (False, True),
    "all_pass": ("redeal", "dealer_forced"),
    "moon": ("all_tricks_5", "none"),
    "bidder_goes_out": (True, False),
}

#: Flags that matter only in the three- and four-handed forms (left out of a two-handed
#: variant's `Variant.to_dict`, so its wire form stays what it was).
TABLE_FLAGS = ("form", "head_partner", "undertrump", "three_tie", "play_on", "marriages", "ten_of_trumps",
               "all_pass", "moon", "bidder_goes_out")  # fmt: skip
#: Two-handed flags added later: sent only when they differ from the default.
LATE_FLAGS = {"closing": True, "forced_marriage": False}
#: Players and pack of each form.
FORM_PLAYERS = {"two_handed": (2,), "pagat": (3, 4), "cutthroat": (3,), "dealer_sits_out": (3,),
                "kreuzmariage": (4,), "bidding": (4,)}  # fmt: skip
FORM_DECKS = {"two_handed": (24, 20), "pagat": (24,), "cutthroat": (24,), "dealer_sits_out": (24,),
              "kreuzmariage": (32,), "bidding": (24,)}  # fmt: skip


@dataclasses.dataclass(frozen=True, slots=True)
class Variant:
    """One complete rule set. Field defaults are two-player Sixty-Six (RULES.md section 5).

    ``players`` is 2, 3 or 4 as the ``form`` allows (seats are indices 0..players-1).
    ``deck`` is 24 (A-9), 20 (A-J, no nines) or 32 (A-7, Kreuzmariage); in the two-handed
    form the hand size and the deal order follow from it (6 cards dealt 3-3 then the
    turn-up; 5 cards dealt 3, turn-up, 2). ``target`` is the match target of the form.
    ``review_last_trick`` does not change the engine: every seat is always sent the whole
    public trick history, as a player with perfect memory would know it (RULES.md F1.8).
    """

    name: str = "sixty-six"
    form: str = "two_handed"
    players: int = 2
    deck: int = 24
    next_dealer: str = "alternate"
    exchange_rank: str = "9"
    exchange_needs_trick: bool = True
    exchange_timing: str = "lead_only"
    exchange_min_talon: int = 2
    exchange_on_first_lead: bool = True
    exchange_on_close: str = "none"
    marriage_needs_trick: str = "to_count"
    marriage_after_close: bool = False
    marriage_lead: str = "either"
    strict_must_head: bool = True
    strict_must_trump: bool = True
    close_before_draw: bool = True
    close_on_first_lead: bool = True
    close_min_talon: int = 2
    close_score_basis: str = "end"
    failed_close: str = "two_or_three"
    beaten_closer: str = "two_or_three"
    false_claim: str = "two_or_three"
    out_timing: str = "after_trick_or_meld"
    auto_out: bool = False
    exhausted_rule: str = "higher_total"
    draw_carry: int = 0
    schneider_at: int = 33
    target: int = 7
    review_last_trick: bool = True
    shutout_double: bool = False
    closing: bool = True
    forced_marriage: bool = False
    head_partner: bool = True
    undertrump: str = "required"
    three_tie: str = "share"
    play_on: bool = True
    marriages: bool = True
    ten_of_trumps: bool = False
    all_pass: str = "redeal"
    moon: str = "all_tricks_5"
    bidder_goes_out: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise VariantError(f"variant name must be a non-empty string, got {self.name!r}")
        for flag, allowed in FLAG_VALUES.items():
            value = getattr(self, flag)
            # bool is an int subclass: True must not pass for 1, nor 2 for True.
            if not any(type(value) is type(a) and value == a for a in allowed):
                shown = ", ".join(repr(a) if isinstance(a, str) else str(a).lower() for a in allowed)
                raise VariantError(f"variant flag {flag!r} must be one of {shown}; got {value!r}")
        if type(self.target) is not int or not 1 <= self.target <= 99:
            raise VariantError(f"variant flag 'target' must be a whole number 1..99; got {self.target!r}")
        players = FORM_PLAYERS[self.form]
        if self.players not in players:
            shown = ", ".join(map(str, players))
            raise VariantError(
                f"variant flag 'players' must be one of {shown} for form {self.form!r}; got {self.players!r}"
            )
        decks = FORM_DECKS[self.form]
        if self.deck not in decks:
            shown = ", ".join(map(str, decks))
            raise VariantError(f"variant flag 'deck' must be one of {shown} for form {self.form!r}; got {self.deck!r}")
        if self.form == "kreuzmariage" and not self.head_partner:
            raise VariantError("variant flag 'head_partner' must be true in form 'kreuzmariage' (F4.2)")
        if self.deck == 20 and self.exchange_rank == "9":
            raise VariantError("variant flag 'exchange_rank' is '9' but a 20-card deck has no nines; use 'J'")

    # -- derived facts ------------------------------------------------------------------
    @property
    def hand_size(self) -> int:
        """Cards per hand (two-handed: dealt before the talon)."""
        if self.form == "two_handed" or self.form == "dealer_sits_out":
            return 6 if self.deck == 24 else 5
        return {"pagat": 24 // self.players, "cutthroat": 7, "kreuzmariage": 8, "bidding": 6}[self.form]

    @property
    def is_table(self) -> bool:
        """Whether deals are `arena.game.table.TableState` (three or four seats, no talon)."""
        return self.form not in ("two_handed", "dealer_sits_out")

    @property
    def teams(self) -> int:
        """Sides that score: 2 in the partnership games (partners opposite), else one per seat."""
        return 2 if self.players == 4 else self.players

    @property
    def hand_variant(self) -> Variant:
        """The two-handed variant a deal of this one is played with (F3.3 deals one)."""
        if self.form != "dealer_sits_out":
            return self
        return _hand_variant(self)

    @property
    def exchange_rank_index(self) -> int:
        return NINE if self.exchange_rank == "9" else JACK

    # -- conversion ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (the form sent in the protocol's ``hello``). Every
        field is a scalar: a shallow copy, not `dataclasses.asdict`'s deep one (a record
        of each match holds one)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if self.form == "two_handed":
            for flag in TABLE_FLAGS:
                del out[flag]
            for flag, default in LATE_FLAGS.items():
                if out[flag] == default:
                    del out[flag]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Variant:
        """Build a variant from ``{"base": preset, flag: value, ...}``.

        ``base`` (default ``"sixty-six"``) names the preset the flags override; ``name``
        defaults to the base's name when nothing is overridden, else ``"<base>+custom"``.
        """
        if not isinstance(data, Mapping):
            raise VariantError(f"variant must be a table of flags, got {type(data).__name__}")
        data = dict(data)
        base = get_variant(data.pop("base", "sixty-six"))
        known = {f.name for f in dataclasses.fields(cls)}
        for flag in data:
            if flag not in known:
                raise VariantError(f"unknown variant flag {flag!r}; known flags: {', '.join(sorted(known))}")
        name = data.pop("name", None)
        if name is None:
            same = all(type(getattr(base, k)) is type(v) and getattr(base, k) == v for k, v in data.items())
            name = base.name if same else f"{base.name}+custom"
        return dataclasses.replace(base, name=name, **data)

    def with_flags(self, **flags: Any) -> Variant:
        """A copy with some flags changed and validated; keeps the name unless one is given."""
        return Variant.from_dict({"base": self, "name": self.name, **flags})


SIXTY_SIX = Variant()
SCHNAPSEN = Variant(
    name="schnapsen",
    deck=20,
    exchange_rank="J",
    exchange_needs_trick=False,
    marriage_after_close=True,
    close_before_draw=False,
    close_score_basis="at_close",
    exhausted_rule="last_trick_wins",
)

#: F3.1, the recommended three-handed default (RULES.md section 3).
THREE_PAGAT = Variant(name="three-pagat", form="pagat", players=3)
#: F3.2 South Bend cutthroat, filled in by M9.
THREE_CUTTHROAT = Variant(name="three-cutthroat", form="cutthroat", players=3, moon="none", target=15)
#: F3.3 dealer sits out: two-handed Sixty-Six deals, a three-seat match.
THREE_SITOUT = Variant(name="three-sitout", form="dealer_sits_out", players=3)
#: F4.1 pagat four-handed partnership.
FOUR_PAGAT = Variant(name="four-pagat", form="pagat", players=4)
#: F4.2 classic four-handed, American form (no marriages).
KREUZMARIAGE = Variant(name="kreuzmariage", form="kreuzmariage", players=4, deck=32, marriages=False)
#: F4.3 North-American partnership 66 with bidding.
FOUR_BIDDING = Variant(name="four-bidding", form="bidding", players=4, target=10)

PRESETS: dict[str, Variant] = {v.name: v for v in (SIXTY_SIX, SCHNAPSEN)}
TABLE_PRESETS: dict[str, Variant] = {
    v.name: v for v in (THREE_PAGAT, THREE_CUTTHROAT, THREE_SITOUT, FOUR_PAGAT, KREUZMARIAGE, FOUR_BIDDING)
}
ALL_PRESETS: dict[str, Variant] = {**PRESETS, **TABLE_PRESETS}


@functools.lru_cache(maxsize=64)
def _hand_variant(v: Variant) -> Variant:
    fields = {f: getattr(v, f) for f in FLAG_VALUES if f not in TABLE_FLAGS and f not in ("players", "target")}
    return Variant(name=f"{v.name}/hand", **fields)


def get_variant(name: str | Variant) -> Variant:
    """The preset called ``name`` (a `Variant` passes through); `VariantError` if unknown."""
    if isinstance(name, Variant):
        return name
    try:
        return ALL_PRESETS[name]
    except (KeyError, TypeError):
        raise VariantError(f"unknown variant {name!r}; presets: {', '.join(ALL_PRESETS)}") from None
