"""``arena ladder init|run|standings|history|retire``: a persistent, sandboxed ladder."""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from ..errors import UserError
from ..game import ALL_PRESETS
from ..ladder import rounds as ladder
from ..ladder.runner import run_ladder, run_ladder_on_cluster
from ..ladder.store import LadderStore
from ..report.progress import EventLog, interrupted, match_event
from ..runtime.sandbox import Sandbox, require_isolation
from ..tournament.runner import Finished
from .options import add_cluster, add_time_control_overrides, add_unsafe, time_control_overrides
from .tournament import code_version

DEFAULT = Path("ladder")


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    i = sub.add_parser("init", help="make a new ladder folder (settings, store)")
    i.add_argument("folder", nargs="?", type=Path, default=DEFAULT, help="the ladder's folder (default: ./ladder)")
    i.add_argument("--name", help="the ladder's name (default: the folder's name)")
    i.add_argument(
        "--seed", type=int,
        help="a seed mixed with the ladder's secret (128 bits, drawn now and kept in its store), never used alone: "
        "the deals stay secret whatever the seed (default: the secret alone)",
    )  # fmt: skip
    i.add_argument(
        "--variant",
        help=f"rule preset: {', '.join(ALL_PRESETS)} (default: sixty-six); a three- or four-handed one plans tables "
        "instead of pairs",
    )
    i.add_argument("--concurrency", type=int, help="matches in flight (default: the CPU count, at least 2)")
    i.add_argument(
        "--round-pairs", type=int,
        help="duplicate pairs per scheduling round, or in a three- or four-handed game tables (one deck set each, "
        "in every seating) (default: about 8 x concurrency matches)",
    )  # fmt: skip
    add_time_control_overrides(i, "time control of the ladder's matches (kept in its ladder.toml)", config=False)

    r = sub.add_parser("run", help="play scheduled pairs until interrupted, or for N matches")
    _ladder(r)
    r.add_argument(
        "--matches", type=int, metavar="N",
        help="play N more matches in this run, then stop (N matches stored by this run, whatever the store held; "
        "default: no limit)",
    )  # fmt: skip
    r.add_argument("--rounds", type=int, help="stop after this many scheduling rounds (default: no limit)")
    r.add_argument("--quiet", action="store_true", help="print only the standings at the end")
    add_unsafe(r)
    add_cluster(r, config=False)
    r.add_argument("--events", type=Path, metavar="FILE", help="append a JSON-lines event stream to FILE")
    r.add_argument(
        "--site", type=Path, metavar="OUT",
        help="write the ladder's static web site to OUT after every round (default: no site; arena ladder site "
        "writes it on demand)",
    )  # fmt: skip

    s = sub.add_parser("standings", help="ratings with 95%% intervals, games, score, status")
    _ladder(s)
    s.add_argument("--active", action="store_true", help="leave out retired agents")
    s.add_argument("--csv", type=Path, help="also write the table as CSV")

    h = sub.add_parser("history", help="chart each agent's rating over the rounds (PNG, HTML report)")
    _ladder(h)
    h.add_argument("--out", type=Path, help="where to write history.png and the report (default: LADDER/report)")

    w = sub.add_parser("site", help="write the ladder's static web site: standings, agents, rounds, replays")
    _ladder(w)
    w.add_argument("-o", "--out", type=Path, help="the site's folder (default: LADDER/site)")

    t = sub.add_parser("retire", help="stop scheduling an agent; its record stays")
    _ladder(t)
    t.add_argument("agent", help="name@version, or a name (its active version)")
    t.add_argument("--undo", action="store_true", help="make a retired entry active again")


def _ladder(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ladder", type=Path, default=DEFAULT, help="the ladder's folder (default: ./ladder)")


def run(args: argparse.Namespace) -> int:
    actions = {"init": _init, "run": _run, "standings": _standings, "history": _history, "site": _site,
               "retire": _retire}  # fmt: skip
    return actions[args.action](args)


def _init(args: argparse.Namespace) -> int:
    settings = {
        k: v
        for k, v in {
            "name": args.name or args.folder.resolve().name,
            "seed": args.seed,
            "variant": args.variant,
            "concurrency": args.concurrency,
            "round_pairs": args.round_pairs,
        }.items()
        if v is not None
    }
    tc = {k: v for k, v in time_control_overrides(args).items() if v is not None}
    if tc:
        settings["time_control"] = tc
    cfg = ladder.init(args.folder, settings)
    print(f"ladder {cfg.name!r} in {args.folder}: settings {args.folder / ladder.CONFIG}, store {cfg.store_path}")
    print(f"next: arena submit AGENT_FOLDER --ladder {args.folder}, then arena ladder run --ladder {args.folder}")
    return 0


def _run(args: argparse.Namespace) -> int:
    for flag in ("matches", "rounds"):
        v = getattr(args, flag)
        if v is not None and v < 1:
            raise UserError(f"--{flag}: must be a positive integer, got {v}")
    cfg = ladder.load(args.ladder)
    target = None
    if args.cluster:  # refused before anything is played: a bad value, or no Dask here
        from ..tournament.cluster import parse_target, require_dask

        target = parse_target(args.cluster)
        require_dask()
    if target is None or not cfg.sandbox.enabled:  # on a cluster, each worker checks its own isolation
        require_isolation(cfg.sandbox, args.unsafe_sandbox, f"ladder {cfg.name!r}")
    log = EventLog(args.events) if args.events else None
    say = (lambda *a: None) if args.quiet else (lambda text: print(text, file=sys.stderr, flush=True))
    with ladder.open_store(cfg) as store:
        active = [e["key"] for e in store.entries("active")]
        on = f" per worker on Dask cluster {target}" if target else ""
        say(
            f"ladder {cfg.name!r}: {len(active)} active agents ({ladder.agents_label(active)}), "
            f"{store.count()} matches stored; {cfg.concurrency} at a time{on}, {cfg.pairs_per_round} "
            f"{'pairs' if cfg.players == 2 else f'tables of {cfg.players}'} a round"
        )
        if len(active) < cfg.players and args.matches is None and args.rounds is None:
            say(f"waiting for at least {cfg.players} active agents (arena submit PATH --ladder DIR)")
        run_id = store.start_run(code_version(), None, sys.argv)

        stale = [False]  # matches stored since the site was last written

        def finished(f: Finished) -> None:
            stale[0] = True
            r = f.record
            if log:
                log.emit("match_finished", **match_event(f))
            if r.forfeit is not None:
                fo = r.forfeit
                say(f"  {f.spec.match_id}: {f.spec.seats[fo.seat]} forfeits ({fo.code}: {fo.detail[:120]})")

        def round_done(round_: int, played: int) -> None:
            say(f"round {round_} done: {played} matches played in this run, {store.count()} stored")
            if log:
                log.emit("round_finished", round=round_, played=played, stored=store.count())
            if args.site:
                write_site()

        def write_site() -> None:
            from ..report.site import build_site

            say(f"site: {build_site(store, args.site, name=cfg.name)}")
            stale[0] = False

        played = 0
        stop: BaseException | None = None
        cluster_error: UserError | None = None
        try:
            if target is not None:
                played = _run_on_cluster(target, cfg, store, run_id, args, log, say, finished, round_done)
            else:
                with Sandbox(cfg.sandbox) as sandbox:  # what it goes without is said even with --quiet
                    played = trio.run(
                        lambda: run_ladder(cfg, store, run_id, sandbox, max_matches=args.matches,
                                           max_rounds=args.rounds, on_finished=finished, on_round=round_done)
                    )  # fmt: skip
        except UserError as e:
            if target is None:
                raise
            cluster_error = e  # a lost scheduler, a worker without bubblewrap: said below, with the way on
        except BaseException as e:
            if not interrupted(e):
                raise
            stop = e
        finally:
            store.finish_run(run_id)
            if log:
                log.close()
        store.verify()  # every match written is there, in the file that was opened, whole
        if args.site and stale[0] and stop is None and cluster_error is None:  # stopped mid-round (--matches)
            write_site()
        if stop is not None or cluster_error is not None:
            again = ["arena", "ladder", "run", "--ladder", str(args.ladder)]
            again += (["--unsafe-sandbox"] if args.unsafe_sandbox else []) + (["--cluster", args.cluster] if
                                                                              target else [])  # fmt: skip
            where = (f"{store.count()} matches in the ladder {args.ladder} ({ladder.rounds_summary(store)}); "
                     f"resume with: {shlex.join(again)}")  # fmt: skip
            if cluster_error is not None:
                raise UserError(f"{cluster_error}; {where}")
            raise KeyboardInterrupt(where) from None
        rated = ladder.ratings(store)
        print(ladder.format_standings(ladder.standings_frame(store, rated), rated.reference))
        print(f"\n{played} matches played now, {store.count()} in the ladder: {cfg.store_path}")
    return 0


def _run_on_cluster(
    target: Any,
    cfg: ladder.LadderConfig,
    store: LadderStore,
    run_id: int,
    args: argparse.Namespace,
    log: EventLog | None,
    say: Callable[[str], None],
    finished: Callable[[Finished], None],
    round_done: Callable[[int, int], None],
) -> int:
    """`run_ladder_on_cluster` on a client of ``target`` (a LocalCluster started here for
    ``local:N``): faults said at once, even with --quiet; a line per worker at the end."""
    from ..tournament.cluster import ClusterReport, connect, event_hooks

    report = ClusterReport()
    hooks = event_hooks(log.emit) if log else {}
    with connect(target) as client:
        if log:
            log.emit("cluster", target=str(target), workers=sorted(client.nthreads(callback_timeout=30)))
        played = run_ladder_on_cluster(cfg, store, run_id, client, unsafe=args.unsafe_sandbox,
                                       max_matches=args.matches, max_rounds=args.rounds, on_finished=finished,
                                       on_round=round_done, note=lambda line: print(line, file=sys.stderr, flush=True),
                                       report=report, **hooks)  # fmt: skip
    for line in report.lines():
        say(line)
    return played


def _standings(args: argparse.Namespace) -> int:
    cfg = ladder.load(args.ladder)
    with ladder.open_store(cfg) as store:
        rated = ladder.ratings(store)
        df = ladder.standings_frame(store, rated, include_retired=not args.active)
        print(ladder.format_standings(df, rated.reference))
        print(f"{store.count()} matches, {ladder.rounds_summary(store)}; store {cfg.store_path}")
    if args.csv:
        df.to_csv(args.csv, index=False)
        print(f"csv: {args.csv}")
    return 0


def _history(args: argparse.Namespace) -> int:
    cfg = ladder.load(args.ladder)
    out = args.out or cfg.folder / "report"
    out.mkdir(parents=True, exist_ok=True)
    with ladder.open_store(cfg) as store:
        png = ladder.history_chart(store, out / "history.png", title=f"Ladder {cfg.name}: ratings over the rounds")
        summary = f"{store.count()} matches, {ladder.rounds_summary(store)}"
    if png is None:
        print(f"no round finished yet ({summary}): the chart shows ratings after each finished round; "
              f"arena ladder run --ladder {args.ladder} plays on")  # fmt: skip
        return 0
    print(summary)
    print(f"chart: {png}")
    from ..report.html import build_report

    print(f"report: {build_report(cfg.store_path, out, title=f'Ladder {cfg.name}')}")
    return 0


def _site(args: argparse.Namespace) -> int:
    from ..report.site import build_site

    cfg = ladder.load(args.ladder)
    out = args.out or cfg.folder / "site"
    with ladder.open_store(cfg) as store:
        path = build_site(store, out, name=cfg.name)
        print(f"{store.count()} matches, {ladder.rounds_summary(store)}")
    print(f"site: {path}")
    print(f"serve it: python -m http.server --directory {out} 8000, then open http://localhost:8000/")
    return 0


def _retire(args: argparse.Namespace) -> int:
    cfg = ladder.load(args.ladder)
    with ladder.open_store(cfg) as store:
        entries = store.entries()
        if "@" in args.agent:
            found = [e for e in entries if e["key"] == args.agent]
        else:
            want = "retired" if args.undo else "active"
            found = [e for e in entries if e["name"] == args.agent and e["status"] == want]
        if not found:
            known = ", ".join(e["key"] for e in entries) or "none"
            raise UserError(f"agent: no entry {args.agent!r} in {cfg.folder} (entries: {known})")
        for e in found:
            if args.undo:
                same = [x["key"] for x in entries if x["name"] == e["name"] and x["status"] == "active"]
                if same:
                    raise UserError(f"agent: {same[0]} is active; retire it before making {e['key']} active again")
            store.set_status(e["key"], "active" if args.undo else "retired")
            print(f"{e['key']}: {'active again' if args.undo else 'retired; its record stays'}")
    return 0
