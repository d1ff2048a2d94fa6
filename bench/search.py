"""The expert's search speed with and without its C kernels: decisions per second.

    python bench/search.py [--matches M] [--samples R] [--variant NAME] [--open-search pimc|ismcts]

Plays M seeded matches of the expert (the agent's settings at fixed work, so both sides of
the comparison search exactly the same worlds and play exactly the same moves) against the
heuristic, in process, once with the pure-Python search and once with the C kernels
(`arena/bots/_csolve.c`, the exact endgame solver; `arena/bots/_cplayout.c`, the playout
policy), R times, the two interleaved so that the machine's other load falls on both. The
unit is the expert's own decisions per second (every decision it is asked, the forced ones
included, as the referee would count them), with the median and min..max of the samples
and the ratio of the medians. It checks that both kernels chose the same action at every
decision, and says so.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.bots import endgame, fast_playout  # noqa: E402
from arena.bots.expert import ExpertStrategy  # noqa: E402
from arena.bots.heuristic import HeuristicStrategy  # noqa: E402
from arena.play.selfplay import play_match  # noqa: E402


class Timed:
    """A strategy wrapper that times each decision and keeps what it chose."""

    def __init__(self, inner: ExpertStrategy):
        self.inner = inner
        self.seconds = 0.0
        self.chosen: list[str] = []

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def __call__(self, obs, legal):
        t = time.perf_counter()
        a = self.inner(obs, legal)
        self.seconds += time.perf_counter() - t
        self.chosen.append(a)
        return a


def use_c(on: bool) -> None:
    endgame.USE_C = on and endgame._csolve is not None
    fast_playout.USE_C = on and fast_playout.AVAILABLE


def run(kernels: bool, args: argparse.Namespace) -> tuple[float, int, list[str]]:
    use_c(kernels)
    endgame._SOLVERS.clear()  # no table carried over from the other kernel's run
    seconds, decisions, chosen = 0.0, 0, []
    for k in range(args.matches):
        e = Timed(ExpertStrategy(k, variant=args.variant, infer=True, lead_model="value", open_search=args.open_search))
        seats = [e, HeuristicStrategy(k)] if k % 2 == 0 else [HeuristicStrategy(k), e]
        play_match(args.variant, 1000 + k, seats)
        seconds += e.seconds
        decisions += len(e.chosen)
        chosen += e.chosen
    return seconds, decisions, chosen


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--matches", type=int, default=2)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--variant", default="sixty-six")
    ap.add_argument("--open-search", default="pimc", choices=("pimc", "ismcts"))
    args = ap.parse_args()
    if endgame._csolve is None and not fast_playout.AVAILABLE:
        print("no C kernel is built (pip install -e . with a C compiler builds them): nothing to compare")
        return 1
    rates: dict[bool, list[float]] = {False: [], True: []}
    plays: dict[bool, list[str]] = {}
    n = 0
    for _ in range(args.samples):
        for kernels in (False, True):
            s, n, chosen = run(kernels, args)
            rates[kernels].append(n / s)
            if plays.setdefault(kernels, chosen) != chosen:
                print("warning: the same kernel chose differently from one sample to the next")
    use_c(True)
    print(
        f"{args.variant}, {args.open_search}, {args.matches} matches against the heuristic "
        f"({n} expert decisions a sample), {args.samples} samples each, interleaved:"
    )
    for kernels, label in ((False, "pure Python"), (True, "C kernels")):
        r = rates[kernels]
        print(f"  {label:12} {statistics.median(r):8.1f} decisions/s  (min {min(r):.1f}, max {max(r):.1f})")
    print(f"  speed-up (ratio of medians): {statistics.median(rates[True]) / statistics.median(rates[False]):.2f}x")
    same = plays[False] == plays[True]
    print(f"  same action at every decision: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
