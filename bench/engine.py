"""Rules-engine speed: decisions per second, in-process, on one core.

    python bench/engine.py [--deals N] [--repeat R] [--presets NAME,...] [--clock wall|cpu]

The headline unit is decisions per second (one `legal_actions` and one `apply_legal`):
deals per second alone flatters, since random deals mostly end after a few decisions on a
false claim. For each preset, two kinds of play, each R samples of N seeded deals:
"random" (both seats pick uniformly among the legal actions, through the public API) and
"played out" (the same, but the seats never close or declare, so every deal runs to its
last trick, the longest deals there are). Each prints decisions/s as the median and the
min..max of the samples, with deals/s and decisions per deal beside it, and how the
random deals ended. A last line per preset times the checked path (`apply_action` with
action strings, what an untrusted caller pays) on random play, once. Also times
`clone()`, which searching agents lean on.

Every preset is timed, the three- and four-handed ones too (`TABLE_PRESETS`: their deals
are `TableState`s; ``three-sitout`` deals two-handed hands), each with its decisions per
deal: the issue-16 bar is 10,000 random deals/s per preset on one core. "Played out"
there means nobody claims 66 (four-pagat) and bids stay at the lowest (bidding forms).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.game import ALL_PRESETS, CLOSE, DECLARE, get_variant, new_deal  # noqa: E402
from arena.game.actions import BID  # noqa: E402

#: The clock samples are timed with: wall time, or this process's CPU time (``--clock cpu``,
#: for a shared machine whose other load would otherwise count against the engine).
CLOCK = time.perf_counter


def fast_run(variant: str, deals: int, seed: int, played_out: bool = False) -> tuple[float, int, Counter]:
    """Random play; with ``played_out`` the seats never close or declare, so every deal
    runs to its last trick (the longest deals there are)."""
    rng = random.Random(seed)
    r = rng.random
    decisions = 0
    reasons: Counter = Counter()
    v = get_variant(variant)
    table = v.is_table
    seats = v.players if table else 2
    high_bids = set(range(BID + 1, BID + 5))
    t0 = CLOCK()
    for k in range(deals):
        st = new_deal(v, seed * deals + k, k % seats)
        while st.to_act >= 0:
            acts = st.legal_actions()
            if played_out:
                acts = [a for a in acts if a != CLOSE and a != DECLARE] or acts
                if table:
                    acts = [a for a in acts if a not in high_bids] or acts
            st.apply_legal(acts[int(r() * len(acts))])
            decisions += 1
        reasons[st.result.reason] += 1
    return CLOCK() - t0, decisions, reasons


def checked_run(variant: str, deals: int, seed: int) -> tuple[float, int]:
    rng = random.Random(seed)
    decisions = 0
    t0 = CLOCK()
    v = get_variant(variant)
    seats = v.players if v.is_table else 2
    for k in range(deals):
        st = new_deal(v, k, k % seats)
        while not st.is_over():
            st.apply_action(rng.choice(st.legal_action_strings()))
            decisions += 1
    return CLOCK() - t0, decisions


def clone_rate(n: int = 100_000) -> float:
    st = new_deal("sixty-six", 7, 0)
    for _ in range(6):
        st.apply_legal(st.legal_actions()[0])
    t0 = CLOCK()
    for _ in range(n):
        st.clone()
    return n / (CLOCK() - t0)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):>9,.0f} ({min(values):,.0f}..{max(values):,.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=20_000, help="deals per sample (default 20000)")
    ap.add_argument("--repeat", type=int, default=5, help="samples per kind of play (default 5)")
    ap.add_argument("--presets", default=",".join(ALL_PRESETS), help="comma-separated presets (default: all)")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="time samples by (default wall)")
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.perf_counter if args.clock == "wall" else time.process_time
    print(
        f"python {sys.version.split()[0]}, {args.repeat} samples of {args.deals:,} deals each, {args.clock} clock; "
        "median (min..max) of the samples"
    )
    for variant in args.presets.split(","):
        for label, played_out in (("random", False), ("played out", True)):
            dps, deals_s, per_deal, reasons = [], [], [], Counter()
            for rep in range(args.repeat):
                dt, decisions, ends = fast_run(variant, args.deals, rep, played_out)
                dps.append(decisions / dt)
                deals_s.append(args.deals / dt)
                per_deal.append(decisions / args.deals)
                reasons += ends
            print(
                f"{variant:<15} {label:<10} decisions/s {spread(dps)}; deals/s {spread(deals_s)}; "
                f"{statistics.median(per_deal):.1f} decisions/deal"
            )
            if not played_out:
                total = sum(reasons.values())
                ends = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in reasons.most_common())
                print(f"{'':<26} random deals end: {ends}")
        dt, decisions = checked_run(variant, args.deals, 0)
        print(
            f"{variant:<15} {'checked':<10} decisions/s {decisions / dt:>9,.0f} (one sample, random play, "
            f"string API); deals/s {args.deals / dt:,.0f}"
        )
    print(f"clone(): {clone_rate():,.0f} copies/s")


if __name__ == "__main__":
    main()
