"""Rule variants as data: every flag of RULES.md section 5, validated, with named presets.

A `Variant` is frozen and hashable, so it can key caches and travel in a match record.
Build one from a preset and overrides (``Variant.from_dict({"base": "schnapsen",
"close_min_talon": 4})``); an unknown flag or a value outside its allowed set raises
`VariantError` with a one-line message naming the flag.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from .cards import JACK, NINE


class VariantError(ValueError):
    """An unknown variant, an unknown flag, or a flag value outside its allowed set."""


#: Allowed values of each flag. ``target`` is any whole number from 1 to 99.
FLAG_VALUES: dict[str, tuple[Any, ...]] = {
    "players": (2,),
    "deck": (24, 20),
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
}


@dataclasses.dataclass(frozen=True, slots=True)
class Variant:
    """One complete rule set. Field defaults are two-player Sixty-Six (RULES.md section 5).

    ``players`` is 2 (seats are indices 0..players-1; three- and four-handed games are not
    built yet). ``deck`` is 24 (A-9) or 20 (A-J, no nines); the hand size and the deal
    order follow from it (6 cards dealt 3-3 then the turn-up; 5 cards dealt 3, turn-up, 2).
    ``review_last_trick`` does not change the engine: every seat is always sent the whole
    public trick history, as a player with perfect memory would know it (RULES.md F1.8).
    """

    name: str = "sixty-six"
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
        if self.deck == 20 and self.exchange_rank == "9":
            raise VariantError("variant flag 'exchange_rank' is '9' but a 20-card deck has no nines; use 'J'")

    # -- derived facts ------------------------------------------------------------------
    @property
    def hand_size(self) -> int:
        return 6 if self.deck == 24 else 5

    @property
    def exchange_rank_index(self) -> int:
        return NINE if self.exchange_rank == "9" else JACK

    # -- conversion ---------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (the form sent in the protocol's ``hello``). Every
        field is a scalar: a shallow copy, not `dataclasses.asdict`'s deep one (a record
        of each match holds one)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

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

PRESETS: dict[str, Variant] = {v.name: v for v in (SIXTY_SIX, SCHNAPSEN)}


def get_variant(name: str | Variant) -> Variant:
    """The preset called ``name`` (a `Variant` passes through); `VariantError` if unknown."""
    if isinstance(name, Variant):
        return name
    try:
        return PRESETS[name]
    except (KeyError, TypeError):
        raise VariantError(f"unknown variant {name!r}; presets: {', '.join(PRESETS)}") from None
