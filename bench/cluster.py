"""Tournament throughput on a Dask cluster against the local runner, and the cost of a chunk.

    python bench/cluster.py [--pairs 20] [--samples 3] [--concurrency 2] [--agents random,greedy,c-cautious]

(1) Runs the same round-robin (``--pairs`` duplicate pairs per pairing, seed 1) as
``arena tournament`` subprocesses, in a fresh store each: the local runner, then
``--cluster local:1`` and ``--cluster local:2``, interleaved (local, 1, 2, local, 1, 2,
...) ``--samples`` times so that a drift of the machine's speed falls on all alike. Prints,
per mode, the median and min..max of matches/s while playing (matches over the span from
the first match's start to the last one's end, read from the store) and end to end (the
command's wall time: start-up, the cluster's start and close, the report left out).
``--concurrency`` is matches in flight for the local runner and per worker on a cluster.

(2) The cost of a chunk, on a LocalCluster of one worker: the scheduling round trip of a
task shaped like a chunk (the config, a chunk's specs, the agent archives as scattered
futures) that does nothing, as the median over many; a chunk's fixed cost on the worker
once the run's agents are up (a one-pair chunk's length minus its matches' span); and a
run's first chunk on a worker, which unpacks, builds and starts the agents. These are what
the chunk size rule in arena/tournament/cluster.py keeps small. (3) The rate at which the
client stores matches (one transaction each), which bounds a cluster of fast agents.
"""

from __future__ import annotations

import argparse
import logging
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def play(mode: str, agents: str, pairs: int, concurrency: int, folder: Path, n: int) -> tuple[float, float, int]:
    """One ``arena tournament`` run: (matches/s while playing, matches/s end to end, matches)."""
    store = folder / f"{mode.replace(':', '-')}-{n}.sqlite"
    argv = [sys.executable, "-m", "arena", "tournament", "--agents", agents, "--pairs", str(pairs), "--seed", "1",
            "--concurrency", str(concurrency), "--store", str(store), "--quiet", "--no-report"]  # fmt: skip
    if mode != "local":
        argv += ["--cluster", mode]
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=1800,
                       env={**os.environ, "XDG_CACHE_HOME": str(folder / "cache")})  # fmt: skip
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{mode}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    with sqlite3.connect(store) as c:
        matches, first, last = c.execute("SELECT count(*), min(started), max(finished) FROM matches").fetchone()
    return matches / (last - first), matches / wall, matches


def spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):7.1f}  ({min(xs):.1f}..{max(xs):.1f})"


def noop(cfg: object, specs: list, archives: list) -> int:
    """A task shaped like a chunk that plays nothing: its round trip is the scheduling cost."""
    return len(specs) + len(archives)


def chunk_costs(agents: str, concurrency: int, tasks: int, chunks: int) -> tuple[list[float], list[float], float, list]:
    """(scheduling round trips of no-op chunk tasks, fixed costs of one-pair chunks on the
    worker, the run's first one-pair chunk's length in seconds, the chunks' records)."""
    from distributed import Client, LocalCluster

    from arena.tournament.cluster import quiet_dask_logs
    from arena.tournament.cluster_worker import pack, run_chunk
    from arena.tournament.schedule import load_config

    quiet_dask_logs()
    cfg = load_config(None, {"agents": agents.split(","), "pairs": chunks + 1, "seed": 1,
                             "concurrency": concurrency})  # fmt: skip
    specs = cfg.schedule()
    pairs = [specs[i : i + 2] for i in range(0, len(specs), 2)]
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None, memory_limit=0,
                      silence_logs=logging.CRITICAL) as cluster, Client(cluster) as client:  # fmt: skip
        archives = client.scatter([pack(m) for m in cfg.agents], hash=False)
        client.submit(noop, cfg, pairs[0], archives, pure=False).result(timeout=60)  # warm
        trips = []
        for _ in range(tasks):
            t0 = time.perf_counter()
            client.submit(noop, cfg, pairs[0], archives, pure=False).result(timeout=60)
            trips.append(time.perf_counter() - t0)
        # The run's first chunk unpacks and builds the agents and starts their processes: once per worker and run.
        first = client.submit(run_chunk, cfg, pairs[0], archives, "bench", pure=False).result(timeout=300)
        fixed: list[float] = []
        records: list = list(first.finished)
        for pair in pairs[1 : chunks + 1]:
            r = client.submit(run_chunk, cfg, pair, archives, "bench", pure=False).result(timeout=300)
            span = max(f.finished for f in r.finished) - min(f.started for f in r.finished)
            fixed.append(r.seconds - span)
            records += r.finished
    return trips, fixed, first.seconds, records


def write_rate(records: list, path: Path, passes: int = 5) -> list[float]:
    """Matches/s the client stores (`write_finished`, one transaction each), over ``passes``
    fresh stores: the bound on a cluster's throughput, whatever its size."""
    from arena.results.store import Store
    from arena.tournament.runner import write_finished

    rates = []
    for k in range(passes):
        with Store(path.with_name(f"{path.stem}-{k}.sqlite")) as store:
            t0 = time.perf_counter()
            for f in records:
                write_finished(store, None, f)
            rates.append(len(records) / (time.perf_counter() - t0))
    return rates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=20)
    ap.add_argument("--samples", type=int, default=3)
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--agents", default="random,greedy,c-cautious")
    ap.add_argument("--tasks", type=int, default=200, help="no-op tasks timed for the scheduling round trip")
    ap.add_argument("--chunks", type=int, default=20, help="one-pair chunks timed for the fixed cost")
    args = ap.parse_args()
    modes = ["local", "local:1", "local:2"]
    playing: dict[str, list[float]] = {m: [] for m in modes}
    whole: dict[str, list[float]] = {m: [] for m in modes}
    print(f"{os.cpu_count()} CPUs; round-robin of {args.agents}, {args.pairs} pairs per pairing, "
          f"{args.concurrency} matches in flight (per worker on a cluster)")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for n in range(args.samples):
            for mode in modes:
                a, b, matches = play(mode, args.agents, args.pairs, args.concurrency, folder, n)
                playing[mode].append(a)
                whole[mode].append(b)
        print(f"\n{matches} matches per run, {args.samples} samples each (median (min..max))")
        print(f"{'mode':10} {'matches/s playing':>28} {'matches/s end to end':>28}")
        for mode in modes:
            print(f"{mode:10} {spread(playing[mode]):>28} {spread(whole[mode]):>28}")
        base = statistics.median(playing["local"])
        for mode in modes[1:]:
            print(f"{mode}: {statistics.median(playing[mode]) / base:.2f}x the local runner while playing")
        trips, fixed, first, records = chunk_costs(args.agents, args.concurrency, args.tasks, args.chunks)
        writes = write_rate(records, folder / "writes.sqlite")
    ms = sorted(1000 * t for t in trips)
    print(f"\nscheduling round trip of a chunk-shaped task: median {statistics.median(ms):.1f} ms "
          f"(p10 {ms[len(ms) // 10]:.1f}, p90 {ms[9 * len(ms) // 10]:.1f}; {len(ms)} tasks)")  # fmt: skip
    fx = sorted(1000 * t for t in fixed)
    print(f"fixed cost of a chunk on the worker (agents checked, pools kept from the run's earlier chunks): median "
          f"{statistics.median(fx):.1f} ms ({fx[0]:.1f}..{fx[-1]:.1f}; {len(fx)} one-pair chunks)")  # fmt: skip
    print(f"a run's first chunk on a worker (agents unpacked, built, started; one pair): {1000 * first:.0f} ms")
    print(
        f"the client's writes: {statistics.median(writes):.0f} matches/s (median of {len(writes)} passes over "
        f"{len(records)} records, one transaction each): what bounds a cluster of fast agents"
    )


if __name__ == "__main__":
    main()
