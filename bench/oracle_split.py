"""Where knowing the opponent's hand pays: the hand oracle at one kind of decision only.

    python bench/oracle_split.py KIND [KIND ...] [--pairs 400] [--seed 61] [--variant sixty-six] [--workers 2]

The expert (the agent's search at fixed work: ``infer=True, lead_model="value"``) plays
duplicate pairs against the heuristic, as `bench/strength.py` does, but at the decisions
of the named kinds it searches the hand oracle's worlds (`HandOracleStrategy`: the
opponent's true hand, the face-down talon shuffled) instead of its own. The gain over
``none`` on the same seeds is what the hand is worth at those decisions. Kinds:

- ``none``: the expert everywhere (the baseline); ``all``: the hand oracle everywhere;
- ``strict``: talon closed or exhausted; ``talon2``: the last two talon cards (solved);
- ``open``: every open-phase decision searched by playouts; split into ``close`` (where
  closing is legal: whether to close and what to lead), ``follow`` and ``lead`` (the
  other leads);
- ``close-choice``: where closing is legal, the oracle decides only whether to close,
  the expert what to lead; ``lead-choice``: the expert decides whether to close, the
  oracle what to lead.

Several kinds are run one after the other, each printing A's score and game points a
deal against the heuristic. In-process only (the oracle reads the referee's state).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import strength  # noqa: E402

from arena.bots.expert import ExpertStrategy, HandOracleStrategy  # noqa: E402
from arena.bots.heuristic import HeuristicStrategy  # noqa: E402

KINDS = ("none", "all", "strict", "talon2", "open", "close", "follow", "lead", "close-choice", "lead-choice")


class SplitOracle(HandOracleStrategy):
    """The expert, shown the opponent's hand at the decisions of ``kinds`` only."""

    def __init__(self, seed: int, kinds: frozenset[str], **kw: Any):
        super().__init__(seed, **kw)
        self.kinds = kinds
        self._hand = False
        self._legal: list[str] = []

    def _kind(self, info: Any, obs: dict[str, Any]) -> str:
        if info.strict:
            return "strict"
        if info.talon_size <= self.EXACT_TALON:
            return "talon2"
        if obs["phase"] == "follow":
            return "follow"
        return "close" if "close" in self._legal else "lead"

    def _worlds(self, info: Any, obs: dict[str, Any]) -> Any:
        kind = self._kind(info, obs)
        open_kind = kind in ("follow", "close", "lead")
        if self._hand or "all" in self.kinds or kind in self.kinds or (open_kind and "open" in self.kinds):
            return HandOracleStrategy._worlds(self, info, obs)
        return ExpertStrategy._worlds(self, info, obs)

    def _search(self, hand: bool, obs: dict[str, Any], legal: list[str], t: float | None) -> str:
        self._hand, self._legal = hand, legal
        try:
            return ExpertStrategy.choose(self, obs, legal, t)
        finally:
            self._hand = False

    def choose(self, obs: dict[str, Any], legal: list[str], time_left_ms: float | None = None) -> str:
        legal = list(legal)
        split = {"close-choice", "lead-choice"} & self.kinds
        if not split or "close" not in legal or obs["phase"] == "follow":
            return self._search(False, obs, legal, time_left_ms)
        first = self._search("close-choice" in split, obs, legal, time_left_ms)
        if first == "close":
            return first
        rest = [a for a in legal if a != "close"]
        return self._search("lead-choice" in split, obs, rest, time_left_ms)


def make(player: tuple[str, dict[str, Any]], seed: int, variant: str) -> Any:
    name, kw = player
    if name == "heuristic":
        return HeuristicStrategy(seed)
    return SplitOracle(seed, frozenset(kw["kinds"]), variant=variant, infer=True, lead_model="value")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kinds", nargs="+", help=", ".join(KINDS))
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--seed", type=int, default=61)
    ap.add_argument("--variant", default="sixty-six")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    bad = [k for k in args.kinds if k not in KINDS]
    if bad:
        raise SystemExit(f"oracle_split.py: unknown kind {bad[0]!r}; kinds: {', '.join(KINDS)}")
    strength.make = make  # the workers are forked after this, so they play these players
    for kind in args.kinds:
        kinds = [] if kind == "none" else [kind]
        strength.parse_player = lambda t, k=kinds: ("heuristic", {}) if t == "heuristic" else ("x", {"kinds": k})
        sys.argv = [sys.argv[0], f"expert[{kind}]", "heuristic", "--pairs", str(args.pairs), "--seed",
                    str(args.seed), "--variant", args.variant, "--workers", str(args.workers)]  # fmt: skip
        strength.main()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
