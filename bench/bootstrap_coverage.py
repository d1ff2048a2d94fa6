"""How often the ratings' 95% intervals hold the true rating, at few pairs per pairing.

    python bench/bootstrap_coverage.py [--sets 400] [--reps 200] [--seed 0]

A pure simulation. Each set is a duplicate round robin among agents of known true
ratings (normal, mean 0): every match has its exact Bradley-Terry probability p, but the
deal favours one seat (``p + delta`` and ``p - delta`` for the pair's two matches,
``delta = luck min(p, 1-p)``, its sign drawn), so the two matches of a pair are negatively
correlated, as in duplicate play. For each configuration (pairs per pairing, agents, the
spread of the true ratings, luck) and each method, the share of agents' 95% intervals
that hold the true rating, with its standard error over the sets (the agents of a set
are not independent), and the mean interval width in Elo:

- ``analytic``: `arena.stats.rating.fit`, ``elo +- 1.96 se`` from the information matrix;
- ``plain percentile``: the bootstrap before issue 13: n pairs drawn from n in each
  pairing, the 2.5% and 97.5% percentiles of the refits;
- ``rescaled percentile``: Rao and Wu's rescaled draws (n - 1 pairs weighted n/(n-1)),
  percentiles;
- ``bootstrap()``: `arena.stats.bootstrap.bootstrap` as shipped: rescaled draws, ``elo +- 1.96
  SD`` of the refits.

Sets in which an agent won or lost every match are left out (its bootstrap interval is
open on that side) and counted.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.stats.bootstrap import bootstrap, bootstrap_samples  # noqa: E402
from arena.stats.rating import expected_score, fit  # noqa: E402

#: (pairs per pairing, agents, SD of the true ratings, luck)
CONFIGS = [(5, 5, 150.0, 0.8), (10, 5, 150.0, 0.8), (10, 5, 150.0, 0.0), (10, 8, 200.0, 0.5), (20, 5, 150.0, 0.8)]
METHODS = ("analytic", "plain percentile", "rescaled percentile", "bootstrap()")


def simulate(rng: np.random.Generator, true: np.ndarray, pairs: int, luck: float) -> list[dict]:
    """Rows of a duplicate round robin (see the module's docstring)."""
    names = [f"p{k}" for k in range(len(true))]
    rows = []
    for i in range(len(true)):
        for j in range(i + 1, len(true)):
            p = float(expected_score(true[i] - true[j]))
            delta = luck * min(p, 1 - p) * np.where(rng.random(pairs) < 0.5, 1, -1)
            first, second = rng.random(pairs) < p + delta, rng.random(pairs) < p - delta
            pairing = f"{names[i]}~{names[j]}"
            for k in range(pairs):
                rows.append({"seat0": names[i], "seat1": names[j], "winner": 0 if first[k] else 1,
                             "pairing": pairing, "pair_index": k})  # fmt: skip
                rows.append({"seat0": names[j], "seat1": names[i], "winner": 1 if second[k] else 0,
                             "pairing": pairing, "pair_index": k})  # fmt: skip
    return rows


def arrays(rows: list[dict], n: int) -> tuple[np.ndarray, ...]:
    """Winner and loser indices, pair ids and pairing ids of the rows."""
    idx = lambda name: int(name[1:])  # noqa: E731
    won = np.array([idx((r["seat0"], r["seat1"])[r["winner"]]) for r in rows])
    lost = np.array([idx((r["seat0"], r["seat1"])[1 - r["winner"]]) for r in rows])
    pairing = np.minimum(won, lost) * n + np.maximum(won, lost)
    group = pairing * 10_000 + np.array([r["pair_index"] for r in rows])
    return won, lost, group, pairing


def run(cfg: tuple[int, int, float, float], sets: int, reps: int, seed: int) -> tuple[dict, int]:
    pairs, n, spread, luck = cfg
    rng = np.random.default_rng(seed)
    hits: dict[str, list[float]] = {m: [] for m in METHODS}
    width: dict[str, list[float]] = {m: [] for m in METHODS}
    skipped = 0
    for k in range(sets):
        true = rng.normal(0.0, spread, n)
        true -= true.mean()
        rows = simulate(rng, true, pairs, luck)
        boot = bootstrap(rows, [f"p{i}" for i in range(n)], reps=reps, seed=k)
        if any(boot.open):
            skipped += 1
            continue
        r = fit(rows, boot.names)
        won, lost, group, pairing = arrays(rows, n)
        intervals = {"analytic": r.ci95, "bootstrap()": boot.ci95}
        for name, rescale in (("plain percentile", False), ("rescaled percentile", True)):
            s, _ = bootstrap_samples(won, lost, n, group, pairing, reps=reps, seed=k, rescale=rescale, start=r.elo)
            intervals[name] = np.column_stack([np.percentile(s, 2.5, axis=0), np.percentile(s, 97.5, axis=0)])
        for name, ci in intervals.items():
            hits[name].append(float(np.mean((ci[:, 0] <= true) & (true <= ci[:, 1]))))
            width[name].append(float(np.mean(ci[:, 1] - ci[:, 0])))
    return {m: (np.mean(hits[m]), np.std(hits[m], ddof=1) / math.sqrt(len(hits[m])), np.mean(width[m]))
            for m in METHODS}, skipped  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", type=int, default=400, help="simulated round robins per configuration")
    ap.add_argument("--reps", type=int, default=200, help="bootstrap replicates")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    print(f"share of 95% intervals holding the true rating (+- SE over {args.sets} sets), mean width in Elo;"
          f" {args.reps} bootstrap replicates")  # fmt: skip
    print(f"{'pairs/pairing, agents, SD, luck':<34}" + "".join(f"{m:>24}" for m in METHODS))
    for c, cfg in enumerate(CONFIGS):
        res, skipped = run(cfg, args.sets, args.reps, args.seed + c)
        label = f"{cfg[0]:>2}, {cfg[1]}, {cfg[2]:.0f}, {cfg[3]:.1f}" + (f" ({skipped} left out)" if skipped else "")
        cells = [f"{100 * h:.1f}% +- {100 * s:.1f}, {w:.0f}" for h, s, w in (res[m] for m in METHODS)]
        print(f"{label:<34}" + "".join(f"{x:>24}" for x in cells))
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
