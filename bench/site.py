"""The ladder site and the replay viewer at scale: a generated ladder of 100 agents and
100,000 matches, the time ``arena ladder site`` takes to write its site, and the time the
replay of the longest match takes to make and to open in headless Chromium.

    python bench/site.py [--agents 100] [--matches 100000] [--round-pairs 16] [--keep DIR]

The ladder is real (``arena ladder init``'s folder and store); its entries, rounds, pairs,
matches and rating history are written through the store's own API (`LadderStore.add_entry`,
`plan`, `Store.write_match`, `record_history`). Each match is a real match's record, from a
template tournament of the bundled agents (random, greedy, heuristic; no sandbox), under
its new id and seats: who wins follows the seats' true ratings (spread 400 Elo), and one
match in 200 is a crash forfeit, so standings, head-to-head tables and fault lists are
realistic. The history after each round is a random walk toward the true ratings (fitting
the ratings 6,000 times would only slow the set-up). Then ``arena ladder site`` runs as a
subprocess twice: a fresh site (every replay made) and a refresh (replays kept); the
target is under a minute. Last, ``arena view`` writes the replay of the match with the most
actions, and Playwright opens it in the system Chromium: the target is under a second; the
same for the longest match of a real four-bidding tournament (four seats, the auction,
random bidders set deal after deal: long matches). ``--table-only`` times that alone.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from analysis import records, template_store  # noqa: E402

from arena.ladder import rounds as ladder  # noqa: E402
from arena.play.referee import Forfeit  # noqa: E402
from arena.results.store import Store  # noqa: E402


def generate(folder: Path, agents: int, matches: int, round_pairs: int, template: Path) -> Path:
    """A ladder in ``folder`` with ``agents`` entries and ``matches`` matches; its store."""
    cfg = ladder.init(folder, {"name": "bench", "round_pairs": round_pairs, "concurrency": 4})
    with Store(template, create=False) as t:
        recs = [rec for _, rec in records(t) if rec.forfeit is None]
    by_winner = {0: [r for r in recs if r.winner == 0], 1: [r for r in recs if r.winner == 1]}
    rng = random.Random(1)
    keys = [f"agent{k:03d}@1" for k in range(agents)]
    true = {k: rng.gauss(0, 400 / 2.5) for k in keys}
    est = dict.fromkeys(keys, 0.0)
    with ladder.open_store(cfg) as store:
        for k in keys:
            store.add_entry({"key": k, "name": k.split("@")[0], "version": "1", "language": "python",
                             "content_hash": f"{hash(k) & (2**64 - 1):016x}" * 4, "folder": str(folder)})  # fmt: skip
        run_id = store.start_run("bench", None, sys.argv)
        n = 0
        rnd = 0
        while n < matches:
            picks = [tuple(rng.sample(keys, 2)) for _ in range(round_pairs)]
            pairs = store.plan(rnd, [(a, b, rng.getrandbits(64)) for a, b in picks])
            for p in pairs:
                for game, seats in ((0, (p["a"], p["b"])), (1, (p["b"], p["a"]))):
                    if n >= matches:
                        break
                    p0 = 1 / (1 + 10 ** ((true[seats[1]] - true[seats[0]]) / 400))
                    winner = 0 if rng.random() < p0 else 1
                    rec = rng.choice(by_winner[winner])
                    if rng.random() < 1 / 200:  # a crash: the loser forfeits in its last deal
                        rec = dataclasses.replace(rec, forfeit=Forfeit(seat=1 - winner, code="crash",
                                                  detail="exited with status 1; stderr ends: broken agent",
                                                  deal=len(rec.deals), decision=3))  # fmt: skip
                    now = time.time()
                    store.write_match(run_id=run_id, index=2 * p["id"] + game, match_id=f"L{p['id']}.{game}",
                                      pairing=f"{p['a']}~{p['b']}", pair_index=p["id"], game=game, seats=seats,
                                      record=dataclasses.replace(rec, match_id=f"L{p['id']}.{game}"), started=now,
                                      finished=now)  # fmt: skip
                    n += 1
            for k in keys:
                est[k] += 0.05 * (true[k] - est[k]) + rng.gauss(0, 5)
            games = max(1, n * 2 // agents)
            store.record_history(rnd, [(k, est[k], 200 / math.sqrt(games), games) for k in keys])
            rnd += 1
        store.finish_run(run_id)
    return cfg.store_path


def timed(argv: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``python -m arena ARGV`` (CPU of this child alone), and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "arena", *argv], cwd=ROOT, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, p.stdout


def open_in_chromium(page: Path) -> float | None:
    """Seconds from navigation to the first frame drawn (the page's script done), in the
    system Chromium through Playwright; None without them."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        return None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=["--no-sandbox"])
        tab = browser.new_page()
        tab.goto("about:blank")
        times = []
        for _ in range(3):
            t = time.perf_counter()
            tab.goto(page.as_uri() + "#step=0")
            tab.wait_for_function("document.body.dataset.step !== undefined")
            times.append(time.perf_counter() - t)
            tab.goto("about:blank")
        browser.close()
    return min(times)


def longest_and_open(store: Path, table: str, folder: Path) -> None:
    """``arena view`` of the match of ``store`` with the most actions, and its opening time."""
    with Store(store, create=False) as s:
        counts: dict[str, int] = {}
        for chunk in s.chunks("deals", ["match_id", "actions"]):
            for mid, actions in chunk:
                counts[mid] = counts.get(mid, 0) + len(actions.split())
        longest = max(counts, key=counts.__getitem__)
        deals = s.match(longest)[0]["deals"]
    page = folder / f"longest-{table}.html"
    wall, _, _ = timed(["view", str(store), longest, "-o", str(page)])
    print(f"arena view of the longest {table} match ({longest}, {deals} deals, {counts[longest]} actions): "
          f"{wall:.2f} s wall (Python start included), page {page.stat().st_size / 1e3:.0f} KB")  # fmt: skip
    opened = open_in_chromium(page)
    shown = "skipped (no Playwright or Chromium)" if opened is None else (
        f"{opened * 1000:.0f} ms to the first frame drawn (target: under 1 s)")  # fmt: skip
    print(f"opened in Chromium: {shown}")


def table_replay(folder: Path) -> None:
    """The replay of the longest match of a real four-bidding tournament."""
    store = folder / "four-bidding.sqlite"
    subprocess.run(
        [sys.executable, "-m", "arena", "tournament", "--agents", "random,greedy,heuristic,node-greedy", "--variant",
         "four-bidding", "--pairs", "2", "--seed", "3", "--quiet", "--no-report", "--no-sandbox", "--store",
         str(store)], check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    longest_and_open(store, "four-bidding", folder)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=100)
    ap.add_argument("--matches", type=int, default=100_000)
    ap.add_argument("--round-pairs", type=int, default=16, help="duplicate pairs per round (default 16)")
    ap.add_argument("--pairs", type=int, default=10, help="duplicate pairs per pairing of the template tournament")
    ap.add_argument("--keep", type=Path, help="keep the ladder and the site in this folder (default: a temporary one)")
    ap.add_argument("--reuse", action="store_true", help="time the ladder already generated in --keep")
    ap.add_argument("--table-only", action="store_true", help="only the replay of a long four-handed match")
    args = ap.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="bench-site-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if args.table_only:
            table_replay(folder)
            return
        t = time.perf_counter()
        lad = folder / "ladder"
        if args.reuse and args.keep and (lad / ladder.STORE).is_file():
            store_path = lad / ladder.STORE
            with Store(store_path, create=False) as s:
                print(f"ladder: reused, {s.count():,} matches")
        else:
            if lad.exists():
                shutil.rmtree(lad)
            store_path = generate(lad, args.agents, args.matches, args.round_pairs, template_store(folder, args.pairs))
            print(f"ladder: {args.agents} agents, {args.matches:,} matches in rounds of {args.round_pairs} pairs, "
                  f"generated in {time.perf_counter() - t:.0f} s")  # fmt: skip
        site = folder / "site"
        shutil.rmtree(site, ignore_errors=True)
        for what in ("fresh site", "refresh"):
            wall, cpu, out = timed(["ladder", "site", "--ladder", str(lad), "-o", str(site)])
            files = [f for f in site.rglob("*") if f.is_file()]
            size = sum(f.stat().st_size for f in files) / 1e6
            replays = len(list((site / "replays").iterdir()))
            print(f"arena ladder site ({what}): {wall:.1f} s wall, {cpu:.1f} s CPU; {len(files):,} files, "
                  f"{size:.0f} MB, {replays} replay pages (target: under 60 s)")  # fmt: skip
        longest_and_open(store_path, "ladder", folder)
        table_replay(folder)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
