"""Analysis at scale: a real store grown to 10^4, 10^5 (and 10^6) matches, and what
``arena ratings``, ``arena report`` and ``arena export`` cost on it.

    python bench/analysis.py [--sizes 10000,100000] [--max 1000000] [--agents 10]
                             [--commands ratings,report,export] [--keep DIR]

First a real tournament (``arena tournament`` of the bundled random, greedy and heuristic
agents, no sandbox) gives template matches. Their records are rebuilt from the store
(`MatchRecord`, as the referee made them) and written again through the store's own write
path (`Store.write_match`, one transaction per match), checked first: written back under
their own ids they must give the template's rows exactly, every column. The store is
then grown by writing the templates in turn under new ids, spread over the pairings of
``--agents`` synthetic agents (a round robin: pairing, duplicate pair and game as
`arena tournament` numbers them), up to each size in ``--sizes`` (every size up to
``--max``). At each size every command runs as a subprocess (``python -m arena``) on its
own, and the bench prints its wall and CPU time, its peak RSS (``ru_maxrss`` of the child,
through a fresh ``RUSAGE_CHILDREN`` reader per command) and the store's bytes per match,
then where those bytes go: each table's and index's pages per match (SQLite's ``dbstat``).
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.play.referee import DealRecord, Forfeit, MatchRecord  # noqa: E402
from arena.results.store import Store, unpack_ms  # noqa: E402

TEMPLATE_AGENTS = "random,greedy,heuristic"


def template_store(folder: Path, pairs: int) -> Path:
    """A real tournament's store: the matches the grown store copies."""
    path = folder / "template.sqlite"
    subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "--agents", TEMPLATE_AGENTS, "--pairs", str(pairs), "--seed", "7",
         "--quiet", "--no-report", "--no-sandbox", "--store", str(path)],
        cwd=ROOT, check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return path


def records(store: Store) -> list[tuple[dict, MatchRecord]]:
    """Every stored match as its row and the `MatchRecord` that was written for it."""
    config = store.config or {}
    out = []
    for row in store.matches():
        m, deals = store.match(row["id"])
        forfeit = (
            Forfeit(seat=m["forfeit_seat"], code=m["fault"], detail=m["fault_detail"], deal=m["fault_deal"])
            if m["fault"] is not None
            else None
        )
        rec = MatchRecord(
            match_id=m["id"], seed=m["seed"], variant=config.get("variant", {}),
            time_control=config.get("time_control", {}), agents=[m["seat0"], m["seat1"]], winner=m["winner"],
            score=[m["score0"], m["score1"]], margin=m["margin"], forfeit=forfeit,
            deals=[DealRecord(seed=d["seed"], dealer=d["dealer"], actions=d["actions"].split(), winner=d["winner"],
                              game_points=d["game_points"], carried=d["carried"], reason=d["reason"],
                              points=[d["points0"], d["points1"]], tricks=[d["tricks0"], d["tricks1"]])
                   for d in deals],
            latency_ms=unpack_ms(m["latencies"]), cpu_ms=unpack_ms(m["cpu"]),
        )  # fmt: skip
        out.append((m, rec))
    return out


def check_round_trip(template: Path, folder: Path) -> list[tuple[dict, MatchRecord]]:
    """Write the template's records back through `Store.write_match` under their own ids:
    the rows must be the template's, column for column (the grown store is made this way)."""
    with Store(template, create=False) as t:
        recs = records(t)
        config, config_hash, agents = t.config, t.config_hash, t.agents()
        want = {m["id"]: (m, t.match(m["id"])[1]) for m, _ in recs}
    path = folder / "check.sqlite"
    with Store(path) as s:
        s.bind_config(config, config_hash)
        s.bind_agents(agents)
        for m, rec in recs:
            s.write_match(run_id=m["run_id"], index=m["idx"], match_id=m["id"], pairing=m["pairing"],
                          pair_index=m["pair_index"], game=m["game"], seats=[m["seat0"], m["seat1"]], record=rec,
                          started=m["started"], finished=m["finished"])  # fmt: skip
        for match_id, (m, deals) in want.items():
            got = s.match(match_id)
            if got != (m, deals):
                raise SystemExit(f"the bulk path does not reproduce match {match_id}: {got} != {(m, deals)}")
    path.unlink()
    return recs


class Grower:
    """A store written match by match through `Store.write_match`, a round robin of
    ``agents`` synthetic agents, each match a template's record under a new id."""

    def __init__(self, path: Path, agents: int, recs: list[tuple[dict, MatchRecord]]):
        self.names = [f"agent{k:03d}" for k in range(agents)]
        self.pairings = list(itertools.combinations(self.names, 2))
        self.recs = recs
        self.store = Store(path)
        config = {"format": "round-robin", "agents": self.names, "pairs": 0, "seed": 7,
                  "variant": recs[0][1].variant, "time_control": recs[0][1].time_control}  # fmt: skip
        self.store.bind_config(config, "bench-analysis")
        self.store.bind_agents(
            {"name": n, "version": "1", "language": "python", "content_hash": n, "folder": str(ROOT)}
            for n in self.names
        )
        self.run_id = self.store.start_run("bench", None, sys.argv)
        self.n = 0

    def grow(self, size: int) -> None:
        while self.n < size:
            k = self.n
            pair, game = divmod(k, 2)
            rnd, p = divmod(pair, len(self.pairings))
            a, b = self.pairings[p]
            m, rec = self.recs[(k // 2 * 2) % len(self.recs) + game]  # both games of a template pair
            seats = (a, b) if game == 0 else (b, a)
            match_id = f"{a}~{b}#{rnd}.{game}"
            self.store.write_match(run_id=self.run_id, index=k, match_id=match_id, pairing=f"{a}~{b}",
                                   pair_index=rnd, game=game, seats=seats, record=rec, started=m["started"],
                                   finished=m["finished"])  # fmt: skip
            self.n += 1

    def close(self) -> None:
        self.store.finish_run(self.run_id)
        self.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.store.close()


def breakdown(path: Path, size: int) -> str:
    """Bytes per match of each table and index (whole pages, SQLite's ``dbstat``), largest
    first; empty where this SQLite has no ``dbstat``."""
    import sqlite3

    db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        rows = db.execute("SELECT name, sum(pgsize) AS b FROM dbstat GROUP BY name ORDER BY b DESC").fetchall()
    except sqlite3.Error:
        return ""
    finally:
        db.close()
    return ", ".join(f"{name} {b / size:.0f}" for name, b in rows if b / size >= 0.5)


def measure(args: list[str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (user and system: steadier than wall time on a busy
    machine) and peak RSS (MB) of ``python -m arena ARGS``, run in a fresh reader process
    so that ``RUSAGE_CHILDREN`` is this command's alone."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.perf_counter()\n"
        "subprocess.run([sys.executable, '-m', 'arena', *sys.argv[1:]], check=True, stdout=subprocess.DEVNULL)\n"
        "t = time.perf_counter() - t\n"
        "u = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
        "print(t, u.ru_utime + u.ru_stime, u.ru_maxrss / 1024)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe, *args], cwd=ROOT, check=True, capture_output=True, text=True)
    wall, cpu, rss = out.stdout.split()
    return float(wall), float(cpu), float(rss)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000", help="store sizes, in matches (comma-separated)")
    ap.add_argument("--max", type=int, default=100_000, help="the largest size run (default 100000)")
    ap.add_argument("--agents", type=int, default=10, help="synthetic agents in the round robin (default 10)")
    ap.add_argument("--commands", default="ratings,report,export", help="commands to time (comma-separated)")
    ap.add_argument("--pairs", type=int, default=20, help="duplicate pairs per pairing of the template tournament")
    ap.add_argument("--keep", type=Path, help="keep the stores in this folder (default: a temporary one)")
    args = ap.parse_args()
    sizes = sorted(n for n in map(int, args.sizes.split(",")) if n <= args.max)
    commands = args.commands.split(",")
    folder = Path(args.keep or tempfile.mkdtemp(prefix="bench-analysis-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        recs = check_round_trip(template_store(folder, args.pairs), folder)
        pairings = args.agents * (args.agents - 1) // 2
        print(f"template: {len(recs)} matches of a real tournament ({TEMPLATE_AGENTS}); the write path reproduces "
              f"them column for column; {args.agents} agents, {pairings} pairings")  # fmt: skip
        path = folder / "grown.sqlite"
        path.unlink(missing_ok=True)
        grower = Grower(path, args.agents, recs)
        print(f"{'matches':>9} {'bytes/match':>11} {'grow s':>7}  "
              + "  ".join(f"{c + ' s':>10} {'cpu s':>6} {'MB':>6}" for c in commands))  # fmt: skip
        for size in sizes:
            t = time.perf_counter()
            grower.grow(size)
            grower.store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            grow = time.perf_counter() - t
            per = os.path.getsize(path) / size
            cells = []
            for c in commands:
                out = folder / f"out-{c}"
                extra = {"ratings": [], "report": ["-o", str(out)], "export": ["-o", str(out)]}[c]
                wall, cpu, rss = measure([c, str(path), *extra])
                shutil.rmtree(out, ignore_errors=True)
                cells.append(f"{wall:>10.1f} {cpu:>6.1f} {rss:>6.0f}")
            print(f"{size:>9} {per:>11.0f} {grow:>7.1f}  " + "  ".join(cells), flush=True)
            if parts := breakdown(path, size):
                print(f"{'':>9} bytes/match by table and index: {parts}", flush=True)
        grower.close()
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
