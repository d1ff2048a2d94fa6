"""Rating speed: aggregate a million results and fit 100 agents jointly.

    python bench/rating.py [--agents 100] [--matches 1000000] [--seed 1] [--repeat 3] [--boot 20]

Draws true Elos (normal, sd 200), pairs agents uniformly at random for each match and
draws the winner from the Bradley-Terry probability (seeded numpy). Times the
aggregation into a wins matrix (`aggregate_indices`), the Newton fit (`solve`) and,
apart, the standard errors (`covariance`) and the whole `fit_matrix` (fit, SEs, flags);
best of ``--repeat``. Also times building the matrix from 100,000 dict rows
(`aggregate`) and a bootstrap of ``--boot`` replicates over duplicate pairs (consecutive
matches of a pairing taken two by two). Prints the largest rating error against the
truth and the 95% interval coverage as a sanity check.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.stats.bootstrap import bootstrap_samples  # noqa: E402
from arena.stats.rating import (  # noqa: E402
    ELO,
    Z95,
    aggregate,
    aggregate_indices,
    covariance,
    expected_score,
    fit_matrix,
    solve,
)


def simulate(agents: int, matches: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True Elos (mean 0) and the winner and loser index arrays."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 200.0, agents)
    true -= true.mean()
    a = rng.integers(0, agents, matches)
    b = (a + rng.integers(1, agents, matches)) % agents  # never a itself
    a_wins = rng.random(matches) < expected_score(true[a] - true[b])
    return true, np.where(a_wins, a, b), np.where(a_wins, b, a)


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=100)
    ap.add_argument("--matches", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--boot", type=int, default=20, help="bootstrap replicates to time (0: skip)")
    args = ap.parse_args()
    n, m = args.agents, args.matches

    t0 = time.perf_counter()
    true, winners, losers = simulate(n, m, args.seed)
    print(f"{n} agents, {m:,} results simulated in {time.perf_counter() - t0:.2f} s")

    t_agg, W = best(lambda: aggregate_indices(winners, losers, n), args.repeat)
    t_fit, elo = best(lambda: solve(W), args.repeat)
    t_se, cov = best(lambda: covariance(W, elo), args.repeat)
    print(f"aggregate_indices  {1000 * t_agg:8.1f} ms")
    print(f"solve (Newton)     {1000 * t_fit:8.1f} ms")
    print(f"aggregate + fit    {1000 * (t_agg + t_fit):8.1f} ms   (target < 2000 ms)")
    print(f"covariance (SEs)   {1000 * t_se:8.1f} ms")
    names = [f"agent{k}" for k in range(n)]
    t_all, _ = best(lambda: fit_matrix(W, names), args.repeat)
    print(f"fit_matrix (fit, SEs, flags) {1000 * t_all:8.1f} ms")

    se = np.sqrt(np.diag(cov))
    err = elo - true
    inside = np.abs(err) <= Z95 * se
    print(
        f"max |error| {np.abs(err).max():.1f} Elo, rms {np.sqrt((err**2).mean()):.1f}, mean SE {se.mean():.1f}, "
        f"95% intervals covering the truth {inside.sum()}/{n}"
    )
    print(f"(one unit of log-odds = {ELO:.1f} Elo)")

    rows_n = min(m, 100_000)
    pairs = zip(winners[:rows_n].tolist(), losers[:rows_n].tolist(), strict=True)
    rows = [{"seat0": names[w], "seat1": names[lo], "winner": 0} for w, lo in pairs]
    t_rows, _ = best(lambda: aggregate(rows, names), 1)
    print(f"aggregate (dict rows) {1000 * t_rows:8.1f} ms for {rows_n:,} rows")

    if args.boot:
        # duplicate pairs: consecutive matches of the same (unordered) pairing, two by two
        lo_i, hi_i = np.minimum(winners, losers), np.maximum(winners, losers)
        pairing = lo_i * n + hi_i
        order = np.argsort(pairing, kind="stable")
        rank = np.empty(m, dtype=np.int64)
        rank[order] = np.arange(m) - np.searchsorted(pairing[order], pairing[order])
        groups = pairing * (m // 2 + 1) + rank // 2
        t_boot, (samples, failed) = best(
            lambda: bootstrap_samples(winners, losers, n, groups, pairing, reps=args.boot, seed=args.seed, start=elo),
            1,
        )
        boot_se = np.nanstd(samples, axis=0, ddof=1)
        print(
            f"bootstrap {args.boot} reps over {len(np.unique(groups)):,} pairs: {t_boot:.2f} s "
            f"({1000 * t_boot / args.boot:.0f} ms a replicate), bootstrap SE / analytical SE "
            f"median {np.median(boot_se / se):.2f}, failed {failed}"
        )


if __name__ == "__main__":
    main()
