"""Rules-engine speed: random-vs-random deals per second, in-process, on one core.

    python bench/engine.py [--deals N] [--repeat R]

For each preset, plays N seeded deals where both seats pick uniformly among the legal
actions (through the public API: `legal_actions` then `apply_legal`), R times, and
prints the best and median rate, plus decisions per deal and how deals ended. A second
line measures the checked path (`apply_action` with action strings), which is what an
untrusted caller pays. Also times `clone()`, which searching agents lean on.
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
        st = new_deal(variant, k, k & 1)
        while st.to_act >= 0:
            acts = st.legal_actions()
            if played_out:
                acts = [a for a in acts if a != CLOSE and a != DECLARE] or acts
            st.apply_legal(acts[int(r() * len(acts))])
            decisions += 1
        reasons[st.result.reason] += 1
    return time.perf_counter() - t0, decisions, reasons


def checked_run(variant: str, deals: int, seed: int) -> float:
    rng = random.Random(seed)
    t0 = time.perf_counter()
    for k in range(deals):
        st = new_deal(variant, k, k & 1)
        while not st.is_over():
            st.apply_action(rng.choice(st.legal_action_strings()))
    return time.perf_counter() - t0


def clone_rate(n: int = 100_000) -> float:
    st = new_deal("sixty-six", 7, 0)
    for _ in range(6):
        st.apply_legal(st.legal_actions()[0])
    t0 = time.perf_counter()
    for _ in range(n):
        st.clone()
    return n / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=20_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {args.deals} deals per run, best/median of {args.repeat} runs")
    for variant in ("sixty-six", "schnapsen"):
        rates = []
        for rep in range(args.repeat):
            dt, decisions, reasons = fast_run(variant, args.deals, rep)
            rates.append(args.deals / dt)
        checked = args.deals / checked_run(variant, args.deals, 0)
        ends = ", ".join(f"{k} {100 * v / args.deals:.0f}%" for k, v in reasons.most_common())
        print(
            f"{variant:<10} {max(rates):>9,.0f} deals/s best, {statistics.median(rates):>9,.0f} median "
            f"({decisions / args.deals:.1f} decisions/deal); checked string API {checked:,.0f} deals/s"
        )
        print(f"{'':<10} random deals end: {ends}")
        dt, decisions, _ = fast_run(variant, args.deals, 0, played_out=True)
        print(
            f"{'':<10} played out (never close or declare): {args.deals / dt:,.0f} deals/s "
            f"({decisions / args.deals:.1f} decisions/deal)"
        )
    print(f"clone(): {clone_rate():,.0f} copies/s")


if __name__ == "__main__":
    main()
