"""Position A/B for the close: the same positions, finished by each of several configurations.

    python bench/closing.py CONFIG [CONFIG ...] [--matches 60] [--seed 41] [--variant sixty-six]
                            [--opponent heuristic] [--workers 2] [--at N]

Plays seeded in-process matches of the expert at fixed work (``CONFIG`` 1) against
``--opponent`` (``heuristic`` or an ``expert{...}`` as in `bench/strength.py`) and keeps
every position where the expert may close the talon (with ``--at N``: every decision
with a choice while the talon holds N cards, for a change to the open phase's search,
such as ``EXACT_TALON``). Each position is then played to
the end of its deal by each ``CONFIG`` (an ``expert{...}`` whose settings may name class
attributes such as ``CLOSE_MARGIN``) against the same opponent, and its game points are
recorded. Prints each configuration's mean, its closes, and each one's paired
difference from the first with a 95% interval, and where the first action and the deal's
result differ.

Why positions and not matches: the close is one decision in a few per deal, and a
match-level screen drowns its effect in the noise of the other decisions and of the
match score; here every position is played from the same state by each configuration,
and only the positions where they part contribute to the difference. The price is a
narrower question (game points of the deal, not the match) and an opponent that must be
in process; what ships is proven with ``arena compare`` (docs/agents-strength.md).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from strength import make, parse_player  # noqa: E402

from arena.game import derive_seed, get_variant, observation  # noqa: E402
from arena.game.state import State  # noqa: E402
from arena.play.selfplay import play_match  # noqa: E402


class Recorder:
    """A player that keeps the referee's state wherever closing is legal for it, or with
    ``at`` talon cards: at every decision with a choice while the talon holds that many."""

    sees_state = True
    state: State | None = None

    def __init__(self, player: Any, at: int | None = None):
        self.player = player
        self.at = at
        self.positions: list[tuple[State, int]] = []

    def __call__(self, obs: dict[str, Any], legal: list[str]) -> str:
        st = self.state
        if st is not None:
            if self.at is None:
                keep = "close" in legal
            else:
                keep = not st.strict and st.talon_size() == self.at and len(legal) > 1
            if keep:
                self.positions.append((st.clone(), obs["seat"]))
        return self.player(obs, legal)


def finish(st: State, seat: int, player: Any, opponent: Any) -> tuple[int, str]:
    """Play ``st`` to the end of its deal; ``seat``'s game points and its first action."""
    first = ""
    while not st.is_over():
        s = st.current_player()
        legal = st.legal_action_strings()
        a = (player if s == seat else opponent)(observation(st, s), legal)
        if s == seat and not first:
            first = a
        st.apply_action(a)
    r = st.result
    assert r is not None
    return (0 if r.winner is None else (r.game_points if r.winner == seat else -r.game_points)), first


def run(job: tuple[int, int, list, tuple, str, int | None]) -> list[list[tuple[int, str]]]:
    k, seed, configs, opp, variant, at = job
    rows = []
    for seat in (0, 1):
        me = Recorder(make(configs[0], k, variant), at)
        them = make(opp, k + 500, variant)
        play_match(variant, derive_seed(seed, "match", k), [me, them] if seat == 0 else [them, me])
        for st, s in me.positions:
            rows.append([finish(st.clone(), s, make(c, k, variant), make(opp, k + 500, variant)) for c in configs])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="+", help="expert{...} settings; the first is the baseline")
    ap.add_argument("--matches", type=int, default=60, help="match seeds (each played with the expert in both seats)")
    ap.add_argument("--seed", type=int, default=41)
    ap.add_argument("--variant", default="sixty-six")
    ap.add_argument("--opponent", default="heuristic")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--at", type=int, default=None, metavar="N",
                    help="instead of where closing is legal: every decision while the talon holds N cards")
    args = ap.parse_args()
    try:
        variant = get_variant(args.variant)
    except ValueError as e:
        raise SystemExit(f"closing.py: {e}") from None
    if variant.players != 2:
        raise SystemExit(f"closing.py: the expert plays two-handed games; {args.variant} has {variant.players} seats")
    configs = [parse_player(c) for c in args.configs]
    if any(name != "expert" for name, _ in configs):
        raise SystemExit("closing.py: every CONFIG is an expert{...}")
    opp = parse_player(args.opponent)
    for p in (*configs, opp):  # a bad setting is said here, once
        make(p, 0, args.variant)
    jobs = [(k, args.seed, configs, opp, args.variant, args.at) for k in range(args.matches)]
    with multiprocessing.Pool(args.workers) as pool:
        rows = [r for part in pool.map(run, jobs, chunksize=1) for r in part]
    n = len(rows)
    if n < 2:
        where = "where closing was legal" if args.at is None else f"with {args.at} talon cards"
        raise SystemExit(f"closing.py: fewer than two positions {where}; play more matches")
    print(f"{args.variant}, {args.matches} match seeds (seed {args.seed}), against {args.opponent}: {n} positions")
    for j, text in enumerate(args.configs):
        mean = sum(r[j][0] for r in rows) / n
        closes = sum(r[j][1] == "close" for r in rows)
        print(f"  [{j}] {text}: {mean:+.3f} game points a position, closes at {closes}")
    for j in range(1, len(configs)):
        d = [r[j][0] - r[0][0] for r in rows]
        mean = sum(d) / n
        half = 1.96 * math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1) / n)
        acted = sum(r[j][1] != r[0][1] for r in rows)
        parted = sum(x != 0 for x in d)
        print(f"  [{j}] - [0]: {mean:+.3f} ± {half:.3f} (first action differs at {acted}, result at {parted})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
