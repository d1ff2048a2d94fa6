"""Rating speed: read and fit a real store, and aggregate and fit a million results in memory.

    python bench/rating.py [--agents 100] [--matches 1000000] [--seed 1] [--repeat 3] [--boot 20]
                           [--store-matches 100000] [--store PATH] [--partnership-only]

First the path a user takes (`arena ratings`): a real store is grown as bench/analysis.py
grows one (a real tournament's matches written again through `Store.write_match`, one
transaction per match, spread over a round robin of ``--agents`` synthetic agents) to
``--store-matches`` matches, or ``--store PATH`` is read as it is. Times opening the store
and counting its results in SQL (`Store.result_counts`), the fit of the counts
(`fit_counts`, with SEs and flags), both ``--repeat`` times (median and min..max), and one
whole `python -m arena ratings STORE` (a fresh process: imports, the pair counts and the
table included). The template matches' winners come from real games between other
agents, so these ratings mean nothing: only the times do.

Then, in memory (no store, no SQL): draws true Elos (normal, sd 200), pairs agents
uniformly at random for each match and draws the winner from the Bradley-Terry
probability (seeded numpy). Times the aggregation into a wins matrix
(`aggregate_indices`), the Newton fit (`solve`) and, apart, the standard errors
(`covariance`) and the whole `fit_matrix` (fit, SEs, flags); best of ``--repeat``. Also
times building the matrix from 100,000 dict rows (`aggregate`) and a bootstrap of
``--boot`` replicates over duplicate pairs (consecutive matches of a pairing taken two by
two). Prints the largest rating error against the truth and the 95% interval coverage as
a sanity check.

Last, team ratings (`arena.stats.table_rating`) of ``--agents`` agents from ``--matches``
simulated partnership matches: aggregation, the fit and the SEs, median and spread; and
the path `arena ratings` takes for them: a real store of ``--table-matches`` four-pagat
matches (a real tournament's records written again through `Store.write_match` at tables
of four of the ``--agents`` agents, each deck set in its six partnership seatings, the
winning team drawn from the agents' true ratings so the fit has something to recover),
read back a chunk at a time into arrays (`Store.table_result_codes`, `TableResults`) and
fitted with `fit_table_counts`, and one whole
`python -m arena ratings STORE`. ``--partnership-only`` runs only these two.
"""

from __future__ import annotations

import argparse
import dataclasses
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import analysis  # noqa: E402  (bench/analysis.py: grows a real store)

from arena.results.store import Store, unpack_ms  # noqa: E402
from arena.stats.bootstrap import bootstrap_samples  # noqa: E402
from arena.stats.rating import (  # noqa: E402
    ELO,
    Z95,
    aggregate,
    aggregate_indices,
    covariance,
    expected_score,
    fit_counts,
    fit_matrix,
    solve,
)
from arena.stats.table_rating import Choices, TableResults, fit_table_counts  # noqa: E402
from arena.stats.table_rating import covariance as choice_covariance  # noqa: E402
from arena.stats.table_rating import prepare as prepare_choices  # noqa: E402
from arena.stats.table_rating import solve as solve_choices  # noqa: E402
from arena.tournament.seating import seatings  # noqa: E402


def simulate(agents: int, matches: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """True Elos (mean 0) and the winner and loser index arrays."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 200.0, agents)
    true -= true.mean()
    a = rng.integers(0, agents, matches)
    b = (a + rng.integers(1, agents, matches)) % agents  # never a itself
    a_wins = rng.random(matches) < expected_score(true[a] - true[b])
    return true, np.where(a_wins, a, b), np.where(a_wins, b, a)


def samples(fn, repeat: int) -> tuple[list[float], object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def best(fn, repeat: int) -> tuple[float, object]:
    times, out = samples(fn, repeat)
    return min(times), out


def ms(times: list[float]) -> str:
    return f"{1000 * statistics.median(times):8.1f} ms ({1000 * min(times):.1f}..{1000 * max(times):.1f})"


def read_counts(path: Path) -> tuple[list[dict], list[str]]:
    """What `arena ratings` reads: the counted results and the agents' names."""
    with Store(path, create=False) as store:
        return store.result_counts(), list((store.config or {}).get("agents", []))


def store_bench(args: argparse.Namespace) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-rating-"))
    try:
        path = args.store
        if path is None:
            t0 = time.perf_counter()
            recs = analysis.check_round_trip(analysis.template_store(folder, 20), folder)
            path = folder / "grown.sqlite"
            grower = analysis.Grower(path, args.agents, recs)
            grower.grow(args.store_matches)
            grower.close()
            print(
                f"real store: {args.store_matches:,} matches of {args.agents} agents "
                f"({args.agents * (args.agents - 1) // 2:,} pairings), written through Store.write_match "
                f"from {len(recs)} real matches, in {time.perf_counter() - t0:.1f} s; "
                f"{path.stat().st_size / 1e6:.0f} MB"
            )
        else:
            print(f"real store: {path}")
        t_read, (counts, names) = samples(lambda: read_counts(path), args.repeat)
        t_fit, _ = samples(lambda: fit_counts(counts, names), args.repeat)
        played = sum(c["count"] for c in counts)
        print(f"  open + result_counts (SQL)   {ms(t_read)}   {played:,} matches in {len(counts):,} count rows")
        print(f"  fit_counts (fit, SEs, flags) {ms(t_fit)}")
        t_sum = [a + b for a, b in zip(t_read, t_fit, strict=True)]
        print(f"  read + fit                   {ms(t_sum)}")
        wall, cpu, rss = analysis.measure(["ratings", str(path)])
        print(
            f"  python -m arena ratings STORE, whole process: {wall:.2f} s wall, {cpu:.2f} s CPU, {rss:.0f} MB peak"
            "   (the target: < 5 s and < 500 MB at 10^6 matches)"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agents", type=int, default=100)
    ap.add_argument("--matches", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--boot", type=int, default=20, help="bootstrap replicates to time (0: skip)")
    ap.add_argument("--store-matches", type=int, default=100_000, help="matches in the grown store (default 100000)")
    ap.add_argument("--store", type=Path, help="time this existing store instead of growing one")
    ap.add_argument("--partnership-only", action="store_true", help="only the team ratings of partnership matches")
    ap.add_argument("--table-matches", type=int, default=100_000,
                    help="partnership matches in the grown table store (default 100000; 0: skip)")
    ap.add_argument("--table-store", type=Path,
                    help="the grown table store: read as it is if it exists, else grown there and kept")  # fmt: skip
    args = ap.parse_args()
    n, m = args.agents, args.matches
    if args.partnership_only:
        partnership_bench(n, m, args.seed, args.repeat)
        if args.table_matches:
            partnership_store_bench(args)
        return

    store_bench(args)
    print(f"in memory (simulated results, no store; best of {args.repeat}):")

    t0 = time.perf_counter()
    true, winners, losers = simulate(n, m, args.seed)
    print(f"{n} agents, {m:,} results simulated in {time.perf_counter() - t0:.2f} s")

    t_agg, W = best(lambda: aggregate_indices(winners, losers, n), args.repeat)
    t_fit, elo = best(lambda: solve(W), args.repeat)
    t_se, cov = best(lambda: covariance(W, elo), args.repeat)
    print(f"aggregate_indices  {1000 * t_agg:8.1f} ms")
    print(f"solve (Newton)     {1000 * t_fit:8.1f} ms")
    print(f"aggregate + fit    {1000 * (t_agg + t_fit):8.1f} ms   (in memory: no store read)")
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

    partnership_bench(n, m, args.seed, args.repeat)
    if args.table_matches:
        partnership_store_bench(args)


def table_template(folder: Path) -> list:
    """A real four-pagat tournament's records (the rows the grown store copies)."""
    path = folder / "table-template.sqlite"
    subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "--agents", "random,greedy,heuristic,node-greedy", "--variant",
         "four-pagat", "--pairs", "4", "--seed", "7", "--quiet", "--no-report", "--no-sandbox", "--store", str(path)],
        cwd=analysis.ROOT, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    with Store(path, create=False) as t:
        return [(m, rec) for m, rec in table_records(t)]


def table_records(store: Store) -> list:
    """Every stored table match as its row and a `MatchRecord` (four seats, teams)."""
    from arena.play.referee import DealRecord, MatchRecord

    config = store.config or {}
    out = []
    for row in store.matches():
        m, deals = store.match(row["id"])
        rec = MatchRecord(
            match_id=m["id"], seed=m["seed"], variant=config["variant"], time_control=config["time_control"],
            agents=[m[f"seat{s}"] for s in range(4)], winner=m["winner"], score=[m["score0"], m["score1"]],
            margin=m["margin"], forfeit=None,
            deals=[DealRecord(seed=d["seed"], dealer=d["dealer"], actions=d["actions"].split(), winner=d["winner"],
                              game_points=d["game_points"], carried=d["carried"], reason=d["reason"],
                              points=[d["points0"], d["points1"]], tricks=[d["tricks0"], d["tricks1"]],
                              scores=[d["gain0"], d["gain1"]]) for d in deals],
            latency_ms=unpack_ms(m["latencies"]), cpu_ms=unpack_ms(m["cpu"]), kind="team",
            places=[m[f"place{s}"] for s in range(4)],
        )  # fmt: skip
        out.append((m, rec))
    return out


def partnership_store_bench(args: argparse.Namespace) -> None:
    n, size = args.agents, args.table_matches
    folder = Path(tempfile.mkdtemp(prefix="bench-rating-tables-"))
    try:
        path = args.table_store or folder / "tables.sqlite"
        if path.exists():
            with Store(path, create=False) as s:
                size, n = s.count(), len((s.config or {}).get("agents", []))
            print(f"real store: {path}, {size:,} matches of {n} agents (ratings errors not shown: truth unknown)")
            true = None
        else:
            true = grow_tables(path, folder, n, size, args.seed)
        read_and_fit(path, true, args.repeat)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def grow_tables(path: Path, folder: Path, n: int, size: int, seed: int) -> np.ndarray:
    """Grow a four-pagat store of ``size`` matches of ``n`` agents at ``path``; the true ratings."""
    t0 = time.perf_counter()
    recs = table_template(folder)
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 200.0, n)
    names = [f"agent{k:03d}" for k in range(n)]
    store = Store(path)
    config = {"format": "round-robin", "agents": names, "pairs": 0, "seed": 7,
              "variant": recs[0][1].variant, "time_control": recs[0][1].time_control}  # fmt: skip
    store.bind_config(config, "bench-rating-tables")
    store.bind_agents({"name": a, "version": "1", "language": "python", "content_hash": a, "folder": "."}
                      for a in names)  # fmt: skip
    run_id = store.start_run("bench", None, sys.argv)
    written, k = 0, 0
    while written < size:
        table = sorted(rng.choice(n, 4, replace=False).tolist())
        key = "~".join(names[i] for i in table)
        for game, (seats, _) in enumerate(seatings([names[i] for i in table])):
            if written == size:
                break
            idx = [names.index(x) for x in seats]
            p0 = 1.0 / (1.0 + 10 ** ((true[idx[1]] + true[idx[3]] - true[idx[0]] - true[idx[2]]) / 400))
            w = 0 if rng.random() < p0 else 1
            m, rec = recs[written % len(recs)]
            rec = dataclasses.replace(rec, winner=w, places=[1 if s % 2 == w else 2 for s in range(4)])
            store.write_match(run_id=run_id, index=written, match_id=f"{key}#{k}.{game}", pairing=key,
                              pair_index=k, game=game, seats=seats, record=rec, started=m["started"],
                              finished=m["finished"])  # fmt: skip
            written += 1
        k += 1
    store.finish_run(run_id)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    print(
        f"real store: {size:,} four-pagat matches of {n} agents at tables of four (deck sets of six seatings), "
        f"written through Store.write_match from {len(recs)} real matches in {time.perf_counter() - t0:.0f} s; "
        f"{path.stat().st_size / 1e6:.0f} MB"
    )
    return true


def read_and_fit(path: Path, true: np.ndarray | None, repeat: int) -> None:
    """Time what `arena ratings` does with a table store: read its counts, fit; and the whole command."""

    def read() -> TableResults:
        with Store(path, create=False) as s:
            return TableResults.of_store(s, list((s.config or {}).get("agents", [])))

    t_read, results = samples(read, repeat)
    t_fit, ratings = samples(lambda: fit_table_counts(results), repeat)
    print(f"  open + read into arrays (SQL, numpy)   {ms(t_read)}   {len(results.seat):,} matches")
    print(f"  fit_table_counts (fit, SEs)            {ms(t_fit)}")
    print(f"  read + fit                             {ms([a + b for a, b in zip(t_read, t_fit, strict=True)])}")
    if true is not None:
        err = (np.asarray(ratings.elo) - np.mean(ratings.elo)) - (true - true.mean())
        inside = np.abs(err) <= Z95 * np.asarray(ratings.se)
        print(f"  max |error| {np.abs(err).max():.1f} Elo, 95% intervals covering the truth "
              f"{inside.sum()}/{len(true)}")  # fmt: skip
    wall, cpu, rss = analysis.measure(["ratings", str(path)])
    print(f"  python -m arena ratings STORE, whole process: {wall:.2f} s wall, {cpu:.2f} s CPU, {rss:.0f} MB peak")


def partnership_bench(n: int, m: int, seed: int, repeat: int) -> None:
    """Team ratings (`arena.stats.table_rating`) from ``m`` simulated partnership matches
    of ``n`` agents: four distinct agents a match, seats 0+2 against 1+3, the team of the
    larger summed rating winning more often, partners drawn afresh each match (so almost
    every line-up is new: the fit's worst case; duplicate play repeats line-ups and halves
    the distinct ones). In memory: `partnership_store_bench` reads a real store."""
    rng = np.random.default_rng(seed)
    true = rng.normal(0.0, 200.0, n)
    four = np.empty((0, 4), dtype=np.int64)
    while len(four) < m:
        draw = rng.integers(0, n, (m, 4))
        ok = np.ones(m, dtype=bool)
        for a in range(4):
            for b in range(a + 1, 4):
                ok &= draw[:, a] != draw[:, b]
        four = np.concatenate([four, draw[ok]])[:m]
    p = 1.0 / (1.0 + np.exp(-(true[four[:, 0]] + true[four[:, 2]] - true[four[:, 1]] - true[four[:, 3]]) / ELO))
    won = (rng.random(m) >= p).astype(np.int64)
    choices = Choices(np.stack([four[:, [0, 2]], four[:, [1, 3]]], axis=1), won, np.ones(m))
    print(f"partnership matches, team ratings (simulated, no store; median (min..max) of {repeat}):")
    t_agg, lay = samples(lambda: prepare_choices(choices, n), repeat)
    t_fit, elo = samples(lambda: solve_choices(lay, n), repeat)
    t_se, cov = samples(lambda: choice_covariance(lay, n, elo), repeat)
    total = [a + f + c for a, f, c in zip(t_agg, t_fit, t_se, strict=True)]
    print(f"{n} agents, {m:,} matches, {len(lay.chosen):,} distinct line-ups and results")
    print(f"aggregate and lay out   {ms(t_agg)}")
    print(f"Newton fit              {ms(t_fit)}")
    print(f"covariance (SEs)        {ms(t_se)}")
    print(f"all three               {ms(total)}   (target for the fit: under 2 s)")
    se = np.sqrt(np.diag(cov))
    err = (elo - elo.mean()) - (true - true.mean())
    inside = np.abs(err) <= Z95 * se
    print(f"max |error| {np.abs(err).max():.1f} Elo, mean SE {se.mean():.1f}, 95% intervals covering the truth "
          f"{inside.sum()}/{n}")  # fmt: skip


if __name__ == "__main__":
    main()
