"""The ladder's scheduler against the old one and a plain round robin, at equal cost.

    python bench/ladder_schedule.py [--replicates 200] [--pairs 280] [--round 16] [--seed 0]

A pure simulation: no agents, no store. Agents with known true ratings play a ladder of
``--pairs`` duplicate pairs in rounds of ``--round`` pairs. Each round the real
`arena.stats.rating.fit` is fitted to every match so far and a scheduler plans the round's
pairs; each pair's two matches are then drawn from the true ratings (Bradley-Terry, each
match with its exact probability, but the deal favours one seat, so the pair's two
matches are negatively correlated, as in duplicate play). Three schedulers spend the same
number of pairs, on the same seeds:

- ``new``: `arena.ladder.rounds.choose_pairs` (information about the neighbour gaps, weighted
  by their order's doubt; greedy within a round; some exploration);
- ``old``: the scheduler it replaced (a copy below): random draws proportional to
  ``p(1-p) (var_a + var_b) / (1 + games_ab / 4)``;
- ``round-robin``: every pairing in turn, so each pairing gets the same number of pairs.

Pools: eight agents spread like the bundled ones (two strong agents 65 Elo apart, a
middle field, two near-twins, and ``random`` far below everyone), and pools of seven
agents drawn per replicate (normal, SD 250) with a floor agent 900 Elo below the weakest.

After the last round, from the final fit: the mean SE of the gaps between neighbours in
the true order (Elo; the fit's own estimate), the RMS error of those gaps against the
truth (Elo), both leaving out gaps never in doubt (random's), the rank inversions (pairs
of agents the fit orders wrongly), and the share of pairs spent on pairings never in
doubt (the weaker's true expected score below 1%). Every figure is a mean over the
replicates with its standard error; the paired differences to round robin come with 95%
intervals. Last, an agent joins the first pool halfway: its matches by the end, and how
many places off its final rank is.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.ladder.rounds import C, choose_pairs  # noqa: E402
from arena.stats.rating import Ratings, expected_score, fit  # noqa: E402

#: True ratings, spread like the bundled agents' (README, "Reference agents") and a few
#: submissions between them.
TRUE = {
    "expert": 630.0,
    "heuristic": 565.0,
    "sub-a": 400.0,
    "c-cautious": 250.0,
    "sub-b": 180.0,
    "node-greedy": 0.0,
    "greedy": -30.0,
    "random": -1100.0,
}
LATE = ("sub-c", 300.0)  # the agent that joins halfway in the last scenario
HOPELESS = 0.01  # a pairing is never in doubt when the weaker's true expected score is below this
LUCK = 0.8  # how far a deal favours one seat, as a share of min(p, 1-p)

Scheduler = Callable[[Sequence[str], Ratings, int, random.Random, dict[tuple[str, str], int]], list[tuple[str, str]]]


def old_choose_pairs(
    active: Sequence[str], rated: Ratings, n: int, rng: random.Random, played: dict[tuple[str, str], int]
) -> list[tuple[str, str]]:
    """The scheduler before issue 13, verbatim but for its signature: draws proportional
    to ``p(1-p) (var_a + var_b) / (1 + games_ab / 4)``, variances updated per draw."""
    if len(active) < 2:
        return []
    idx = {k: rated.index(k) for k in active}
    elo = {k: float(rated.elo[i]) for k, i in idx.items()}
    var = {k: float(rated.se[i]) ** 2 for k, i in idx.items()}
    played = dict(played)
    cands = [(a, b) for i, a in enumerate(active) for b in active[i + 1 :]]
    out = []
    for _ in range(n):
        weights = []
        for a, b in cands:
            p = float(expected_score(elo[a] - elo[b]))
            g = played.get((a, b), 0) + played.get((b, a), 0)
            weights.append(max(p * (1 - p) * (var[a] + var[b]) / (1 + g / 4), 1e-12))
        a, b = rng.choices(cands, weights)[0]
        out.append((a, b))
        p = float(expected_score(elo[a] - elo[b]))
        info = 2 * C * C * p * (1 - p)
        for k in (a, b):
            var[k] = 1 / (1 / var[k] + info)
        played[(a, b)] = played.get((a, b), 0) + 2
    return out


def new_choose_pairs(
    active: Sequence[str], rated: Ratings, n: int, rng: random.Random, played: dict[tuple[str, str], int]
) -> list[tuple[str, str]]:
    return choose_pairs(active, rated, n, rng)


def round_robin(
    active: Sequence[str], rated: Ratings, n: int, rng: random.Random, played: dict[tuple[str, str], int]
) -> list[tuple[str, str]]:
    """Each pair to the pairing with the fewest pairs so far (ties in a fixed order): with
    every agent there from the start, a plain cycle through the pairings."""
    cands = [(a, b) for i, a in enumerate(active) for b in active[i + 1 :]]
    counts = {(a, b): played.get((a, b), 0) + played.get((b, a), 0) for a, b in cands}
    out = []
    for _ in range(n):
        pick = min(counts, key=lambda ab: counts[ab])
        out.append(pick)
        counts[pick] += 2
    return out


SCHEDULERS: dict[str, Scheduler] = {"new": new_choose_pairs, "old": old_choose_pairs, "round-robin": round_robin}


def play_pair(a: str, b: str, true: dict[str, float], rng: np.random.Generator, k: int) -> list[dict]:
    """The two matches of a duplicate pair: the same deal, seats swapped. a wins each with
    the Bradley-Terry probability p, but the deal favours one seat: a's chance is
    ``p + delta`` in one match and ``p - delta`` in the other (``delta = LUCK min(p, 1-p)``,
    its sign drawn), so the two are negatively correlated and the true ratings stay exact."""
    p = float(expected_score(true[a] - true[b]))
    delta = LUCK * min(p, 1 - p) * (1 if rng.random() < 0.5 else -1)
    a_first = rng.random() < p + delta
    a_second = rng.random() < p - delta
    pairing = f"{a}~{b}"
    return [
        {"seat0": a, "seat1": b, "winner": 0 if a_first else 1, "pairing": pairing, "pair_index": k, "game": 0},
        {"seat0": b, "seat1": a, "winner": 1 if a_second else 0, "pairing": pairing, "pair_index": k, "game": 1},
    ]


def ladder(
    schedule: Scheduler, true: dict[str, float], pairs: int, round_pairs: int, seed: int, *, late_at: int | None = None
) -> tuple[Ratings, list[tuple[str, str]]]:
    """Play a simulated ladder; return the final fit and every pair played, in order.
    With ``late_at``, the `LATE` agent joins at the first round after that many pairs."""
    names = [k for k in true if late_at is None or k != LATE[0]]
    rng = np.random.default_rng(seed)  # the deals' luck and results
    rows: list[dict] = []
    played: dict[tuple[str, str], int] = {}
    done: list[tuple[str, str]] = []
    round_ = 0
    while len(done) < pairs:
        active = list(true) if late_at is None or len(done) >= late_at else names
        rated = fit(rows, active)
        n = min(round_pairs, pairs - len(done))
        chosen = schedule(active, rated, n, random.Random(seed * 1000 + round_), played)
        for a, b in chosen:
            rows += play_pair(a, b, true, rng, len(done))
            played[(a, b)] = played.get((a, b), 0) + 2
            done.append((a, b))
        round_ += 1
    return fit(rows, list(true)), done


def measures(rated: Ratings, done: list[tuple[str, str]], true: dict[str, float]) -> dict[str, float]:
    names = sorted(true, key=lambda k: -true[k])
    gaps = [(a, b) for a, b in zip(names, names[1:], strict=False) if not hopeless(a, b, true)]
    se = np.mean([rated.se_diff(a, b) for a, b in gaps])
    err = [rated.diff(a, b)[0] - (true[a] - true[b]) for a, b in gaps]
    elo = {k: float(rated.elo[rated.index(k)]) for k in names}
    inversions = sum(elo[a] < elo[b] for i, a in enumerate(names) for b in names[i + 1 :])
    return {
        "se": float(se),
        "rmse": float(np.sqrt(np.mean(np.square(err)))),
        "inversions": float(inversions),
        "hopeless": sum(hopeless(a, b, true) for a, b in done) / len(done),
    }


def hopeless(a: str, b: str, true: dict[str, float]) -> bool:
    """Never in doubt: the weaker's true expected score is below `HOPELESS`."""
    return float(expected_score(-abs(true[a] - true[b]))) < HOPELESS


def mean_se(x: Sequence[float]) -> tuple[float, float]:
    a = np.asarray(x, dtype=float)
    return float(a.mean()), float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else math.nan


def drawn_pool(seed: int) -> dict[str, float]:
    """Seven agents with true ratings drawn (normal, SD 250) and a floor 900 Elo below the
    weakest of them."""
    true = np.random.default_rng([seed, 66]).normal(0.0, 250.0, 7)
    return {**{f"a{k}": float(v) for k, v in enumerate(true)}, "floor": float(true.min() - 900.0)}


POOLS: dict[str, Callable[[int], dict[str, float]]] = {"bundled": lambda seed: TRUE, "drawn": drawn_pool}


def compare(
    replicates: int, pairs: int, round_pairs: int, seed: int, *, pool: str = "bundled",
    schedulers: Sequence[str] = tuple(SCHEDULERS),
) -> dict[str, list[dict[str, float]]]:  # fmt: skip
    """Per scheduler, the list of per-replicate `measures` (the same seeds, hence the same
    true ratings and the same luck draws, for every scheduler)."""
    out: dict[str, list[dict[str, float]]] = {name: [] for name in schedulers}
    for r in range(replicates):
        true = POOLS[pool](seed + r)
        for name in schedulers:
            rated, done = ladder(SCHEDULERS[name], true, pairs, round_pairs, seed + r)
            out[name].append(measures(rated, done, true))
    return out


def late_entry(replicates: int, pairs: int, round_pairs: int, seed: int) -> dict[str, list[tuple[float, float]]]:
    """Per scheduler: the late agent's games and its rank error (places) at the end."""
    true = dict(TRUE)
    true[LATE[0]] = LATE[1]
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in SCHEDULERS}
    truth = sorted(true, key=lambda k: -true[k])
    for r in range(replicates):
        for name, schedule in SCHEDULERS.items():
            rated, _ = ladder(schedule, true, pairs, round_pairs, seed + r, late_at=pairs // 2)
            got = sorted(true, key=lambda k: -rated.elo[rated.index(k)])
            out[name].append((float(rated.games[rated.index(LATE[0])]), abs(got.index(LATE[0]) - truth.index(LATE[0]))))
    return out


KEYS = [("se", "neighbour-gap SE (Elo)"), ("rmse", "neighbour-gap RMS error (Elo)"),
        ("inversions", "rank inversions"), ("hopeless", "pairs never in doubt")]  # fmt: skip


def report(res: dict[str, list[dict[str, float]]]) -> None:
    print(f"{'':<32}" + "".join(f"{name:>20}" for name in res))
    for key, label in KEYS:
        cells = []
        for name in res:
            m, s = mean_se([x[key] for x in res[name]])
            cells.append(f"{100 * m:.1f}% +- {100 * s:.2f}" if key == "hopeless" else f"{m:.2f} +- {s:.2f}")
        print(f"{label:<32}" + "".join(f"{c:>20}" for c in cells))
    print("paired differences against round-robin (mean, 95% interval; share of replicates better, worse):")
    for name in res:
        if name == "round-robin":
            continue
        for key, label in KEYS[:3]:
            d = np.array([x[key] - y[key] for x, y in zip(res[name], res["round-robin"], strict=True)])
            m, s = mean_se(d)
            print(
                f"  {name:<5} {label:<32} {m:+7.2f} [{m - 1.96 * s:+.2f}, {m + 1.96 * s:+.2f}]"
                f"   {100 * np.mean(d < 0):3.0f}%, {100 * np.mean(d > 0):3.0f}%"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicates", type=int, default=200)
    ap.add_argument("--pairs", type=int, default=280, help="duplicate pairs per ladder (280: 10 per pairing)")
    ap.add_argument("--round", type=int, default=16, help="pairs per round (the default of 4 matches in flight)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    span = f"{args.replicates} replicates (seeds {args.seed}..{args.seed + args.replicates - 1})"
    print(f"{args.pairs} duplicate pairs in rounds of {args.round}, {span}; mean +- standard error over replicates")
    print(f"\nbundled-like pool: {', '.join(f'{k} {v:+.0f}' for k, v in TRUE.items())}")
    report(compare(args.replicates, args.pairs, args.round, args.seed, pool="bundled"))
    print("\ndrawn pools: 7 agents drawn per replicate (normal, SD 250) and a floor 900 below the weakest")
    report(compare(args.replicates, args.pairs, args.round, args.seed, pool="drawn"))
    late = late_entry(args.replicates, args.pairs, args.round, args.seed)
    print(f"\n{LATE[0]} ({LATE[1]:+.0f}) joins the bundled-like pool after {args.pairs // 2} pairs: games, rank error")
    for name, got in late.items():
        g, sg = mean_se([x[0] for x in got])
        e, se = mean_se([x[1] for x in got])
        print(f"  {name:<12} games {g:6.1f} +- {sg:.1f}   rank error {e:.2f} +- {se:.2f} places")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
