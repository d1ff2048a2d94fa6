"""The rules engine: pure, deterministic, and the only code that knows the rules.

Start with `new_deal` (or `deal_from_cards`), ask `State.legal_actions`, `apply_action`,
and `observation(state, seat)` for what a seat may see; `Match` chains deals to the
target. Two-handed deals are `State`s; the three- and four-handed forms (`TABLE_PRESETS`)
deal `TableState`s with the same interface. Nothing here does I/O, reads a clock or
touches global random state.
"""

from .actions import (
    CLOSE,
    DECLARE,
    DRAW,
    EXCHANGE,
    MARRY,
    PASS,
    ActionError,
    action_str,
    parse_action,
)
from .cards import CardError, card_str, cards_of, parse_card
from .match import RESULT_KINDS, Match, MatchResult
from .observation import observation
from .shuffle import deck_order, derive_seed
from .state import (
    PHASES,
    REASONS,
    TERMINAL,
    DealResult,
    IllegalActionError,
    State,
    deal_from_cards,
    new_deal,
    pack_of,
)
from .table import TABLE_PHASES, TABLE_REASONS, TableResult, TableState
from .table_deal import new_table_deal, table_from_cards
from .variant import ALL_PRESETS, PRESETS, SCHNAPSEN, SIXTY_SIX, TABLE_PRESETS, Variant, VariantError, get_variant

__all__ = [
    "ALL_PRESETS", "RESULT_KINDS", "TABLE_PHASES", "TABLE_PRESETS", "TABLE_REASONS", "TableResult",
    "TableState", "new_table_deal", "table_from_cards",
    "CLOSE", "DECLARE", "DRAW", "EXCHANGE", "MARRY", "PASS", "PHASES", "PRESETS", "REASONS",
    "SCHNAPSEN", "SIXTY_SIX", "TERMINAL", "ActionError", "CardError", "DealResult",
    "IllegalActionError", "Match", "MatchResult", "State", "Variant", "VariantError",
    "action_str", "card_str", "cards_of", "deal_from_cards", "deck_order", "derive_seed",
    "get_variant", "new_deal", "observation", "pack_of", "parse_action", "parse_card",
]  # fmt: skip
