"""Rules-engine speed: decisions per second, in-process, on one core.

    python bench/engine.py [--deals N] [--repeat R]

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

from arena.game import CLOSE, DECLARE, new_deal  # noqa: E402


def fast_run(variant: str, deals: int, seed: int, played_out: bool = False) -> tuple[float, int, Counter]:
    """Random play; with ``played_out`` the seats never close or declare, so every deal
    runs to its last trick (the longest deals there are)."""
    rng = random.Random(seed)
    r = rng.random
    decisions = 0
    reasons: Counter = Counter()
    t0 = time.perf_counter()
    for k in range(deals):
        st = new_deal(variant, seed * deals + k, k & 1)
        while st.to_act >= 0:
            acts = st.legal_actions()
            if played_out:
                acts = [a for a in acts if a != CLOSE and a != DECLARE] or acts
            st.apply_legal(acts[int(r() * len(acts))])
            decisions += 1
        reasons[st.result.reason] += 1
    return time.perf_counter() - t0, decisions, reasons


def checked_run(variant: str, deals: int, seed: int) -> tuple[float, int]:
    rng = random.Random(seed)
    decisions = 0
    t0 = time.perf_counter()
    for k in range(deals):
        st = new_deal(variant, k, k & 1)
        while not st.is_over():
            st.apply_action(rng.choice(st.legal_action_strings()))
            decisions += 1
    return time.perf_counter() - t0, decisions


def clone_rate(n: int = 100_000) -> float:
    st = new_deal("sixty-six", 7, 0)
    for _ in range(6):
        st.apply_legal(st.legal_actions()[0])
    t0 = time.perf_counter()
    for _ in range(n):
        st.clone()
    return n / (time.perf_counter() - t0)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):>9,.0f} ({min(values):,.0f}..{max(values):,.0f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=20_000, help="deals per sample (default 20000)")
    ap.add_argument("--repeat", type=int, default=5, help="samples per kind of play (default 5)")
    args = ap.parse_args()
    print(
        f"python {sys.version.split()[0]}, {args.repeat} samples of {args.deals:,} deals each; "
        "median (min..max) of the samples"
    )
    for variant in ("sixty-six", "schnapsen"):
        for label, played_out in (("random", False), ("played out", True)):
            dps, deals_s, per_deal, reasons = [], [], [], Counter()
            for rep in range(args.repeat):
                dt, decisions, ends = fast_run(variant, args.deals, rep, played_out)
                dps.append(decisions / dt)
                deals_s.append(args.deals / dt)
                per_deal.append(decisions / args.deals)
                reasons += ends
            print(
                f"{variant:<10} {label:<10} decisions/s {spread(dps)}; deals/s {spread(deals_s)}; "
                f"{statistics.median(per_deal):.1f} decisions/deal"
            )
            if not played_out:
                total = sum(reasons.values())
                ends = ", ".join(f"{k} {100 * v / total:.0f}%" for k, v in reasons.most_common())
                print(f"{'':<21} random deals end: {ends}")
        dt, decisions = checked_run(variant, args.deals, 0)
        print(
            f"{variant:<10} {'checked':<10} decisions/s {decisions / dt:>9,.0f} (one sample, random play, "
            f"string API); deals/s {args.deals / dt:,.0f}"
        )
    print(f"clone(): {clone_rate():,.0f} copies/s")


if __name__ == "__main__":
    main()
