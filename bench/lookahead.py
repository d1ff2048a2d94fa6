"""What a playout costs with lookahead: microseconds per playout at each level.

    python bench/lookahead.py [--states N] [--samples R] [--variant NAME] [--levels 0,1,2,2w3] [--by-talon]

Collects N states of real deals with the talon still open (seeded deals played by the
playout policy, a state taken at every decision), then plays each of them out to the end
of its deal with the C kernel at every level (0: the plain policy, `fast_playout.play_out`;
1 and up: `fast_playout.play_out_lookahead`; ``2w3``: level 2 pruned to 3 candidates, its
``width``), R times, the levels interleaved so that the
machine's other load falls on all of them. Prints, per level, the median and min..max of
the samples in microseconds per playout and the ratio to level 0. A playout is one whole
continuation of a deal, the unit the expert's search spends per candidate and world.
Its medians are `arena.bots.fast_playout.LOOKAHEAD_US`, by which the expert picks its lookahead.
``--by-talon`` prints the same per number of talon cards instead: a playout from the first
lead costs many times the mean.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.bots import fast_playout  # noqa: E402
from arena.bots.playout import policy_action  # noqa: E402
from arena.game import Variant, VariantError, get_variant, new_deal  # noqa: E402
from arena.game.state import OVER  # noqa: E402


def parse_level(text: str) -> tuple[int, int]:
    """``"2"`` -> (2, 0); ``"2w3"`` -> (2, 3): a level and its width (0: every candidate)."""
    level, _, width = text.strip().partition("w")
    lv, w = int(level), int(width) if width else 0
    if not 0 <= lv <= 3 or not 0 <= w <= 32 or (w and lv < 2):
        raise ValueError(text)
    return lv, w


def name(lv: tuple[int, int]) -> str:
    return f"{lv[0]}w{lv[1]}" if lv[1] else str(lv[0])


def open_states(v: Variant, n: int, seed: int) -> list:
    """``n`` states with an open talon, from deals played by the playout policy."""
    rng = random.Random(seed)
    out: list = []
    while len(out) < n:
        st = new_deal(v, rng.randrange(1 << 30), rng.randint(0, 1))
        while st.phase != OVER and not st.strict:
            out.append(st.clone())
            st.apply_legal(policy_action(st))
    return out[:n]


def timings(states: list, levels: list[tuple[int, int]], samples: int) -> dict[tuple[int, int], list[float]]:
    """µs a playout from ``states`` at each level, ``samples`` times, the levels interleaved."""
    times: dict[tuple[int, int], list[float]] = {lv: [] for lv in levels}
    for _ in range(samples):
        for lv in levels:
            t0 = time.perf_counter()
            for st in states:
                if lv[0]:
                    fast_playout.play_out_lookahead(st, *lv)
                else:
                    fast_playout.play_out(st)
            times[lv].append((time.perf_counter() - t0) / len(states) * 1e6)
    return times


def by_talon(args: argparse.Namespace, states: list, levels: list[tuple[int, int]]) -> None:
    """The medians per number of talon cards (the turn-up counted), one row each."""
    groups: dict[int, list] = {}
    for st in states:
        groups.setdefault(st.talon_size(), []).append(st)
    print(f"{args.variant}: {len(states)} open-talon states, {args.samples} samples, C kernel; µs a playout")
    print("  talon  states  " + "  ".join(f"{name(lv):>9}" for lv in levels))
    for talon in sorted(groups, reverse=True):
        times = timings(groups[talon], levels, args.samples)
        cells = "  ".join(f"{statistics.median(times[lv]):9.1f}" for lv in levels)
        print(f"  {talon:5d}  {len(groups[talon]):6d}  {cells}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=300)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--variant", default="sixty-six")
    ap.add_argument("--levels", default="0,1,2")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--by-talon", action="store_true", help="one row per number of talon cards")
    args = ap.parse_args()
    for flag in ("states", "samples"):
        if getattr(args, flag) < 1:
            print(f"bench/lookahead.py: --{flag}: must be 1 or more, got {getattr(args, flag)}", file=sys.stderr)
            return 2
    if not fast_playout.AVAILABLE:
        print("bench/lookahead.py: the C kernel is not built (pip install with a C compiler)", file=sys.stderr)
        return 1
    try:
        levels = [parse_level(x) for x in args.levels.split(",")]
    except ValueError:
        print(f"bench/lookahead.py: --levels: {args.levels!r} is not a list like 0,1,2,2w3", file=sys.stderr)
        return 2
    try:
        v = get_variant(args.variant)
    except VariantError as e:
        print(f"bench/lookahead.py: --variant: {e}", file=sys.stderr)
        return 2
    if fast_playout.rules_for(v) is None:
        print(f"bench/lookahead.py: --variant: the kernel does not model {args.variant}", file=sys.stderr)
        return 2
    states = open_states(v, args.states, args.seed)
    if args.by_talon:
        by_talon(args, states, levels)
        return 0
    times = timings(states, levels, args.samples)
    base = statistics.median(times[levels[0]])
    print(f"{args.variant}: {len(states)} open-talon states, {args.samples} samples, C kernel")
    for lv in levels:
        xs = times[lv]
        med = statistics.median(xs)
        spread = f"({min(xs):.1f} to {max(xs):.1f})"
        print(f"  level {name(lv)}: {med:9.1f} µs a playout {spread}, {med / base:6.1f}x level {name(levels[0])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
