"""``arena tournament [CONFIG.toml]``: a seeded, resumable tournament into a SQLite store.

Given no ``--seed``, the root seed is a secret drawn for the store and kept only there
(`arena.tournament.secret`); ``--secret-file`` gives shards, or a replay of a published competition,
the same secret without putting it on a command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio

from .. import __version__
from ..errors import UserError
from ..game import ALL_PRESETS
from ..report.progress import EventLog, Progress, interrupted, match_event
from ..results.standings import format_standings, standings
from ..results.store import Store
from ..runtime.agents import MANIFEST, build_all, load_manifest, resolve
from ..runtime.sandbox import Sandbox, private
from ..tournament.runner import Finished, run_tournament, write_finished
from ..tournament.schedule import FORMATS, TournamentConfig, load_config, shard
from ..tournament.seating import SEATINGS
from ..tournament.secret import bind_tournament, explicit_seed_warning
from .options import add_cluster, add_sandbox, add_time_control_overrides, sandbox_policy, time_control_overrides


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "config", nargs="?", type=Path,
        help="a TOML config (every field can also be given as a flag; with --store S --resume alone, "
        "the config kept in the store S)",
    )  # fmt: skip
    g = p.add_argument_group("the tournament (override the config)")
    g.add_argument("--name", help="names the default store reports/NAME.sqlite (default: tournament)")
    g.add_argument("--format", choices=FORMATS, help="who meets whom (default: round-robin)")
    g.add_argument("--agents", help="comma-separated agent names or folders (arena agents lists the names)")
    g.add_argument("--challenger", help="gauntlet: the agent that meets all the others")
    g.add_argument(
        "--pairs", type=int,
        help="duplicate pairs per pairing, two matches each; at a table, deck sets per table, each deck played in "
        "every seating (default: 10)",
    )  # fmt: skip
    g.add_argument(
        "--seed", type=int,
        help="a plain root seed: the same deals on every run, for trusted agents only (default: a secret of 128 "
        "bits drawn for the store and kept in it, so no agent can rebuild the deals)",
    )  # fmt: skip
    g.add_argument(
        "--secret-file", metavar="FILE",
        help="the root seed is the secret in FILE (as arena secret STORE prints it): shards of one tournament, "
        "or a replay of a published one",
    )  # fmt: skip
    g.add_argument(
        "--variant",
        help=f"rule preset: {', '.join(ALL_PRESETS)} (default: sixty-six); a three- or four-handed one plays tables "
        "(docs/tournaments.md)",
    )  # fmt: skip
    g.add_argument(
        "--seating", choices=SEATINGS,
        help="three-handed tables: each deck in every rotation of the table (default) or every permutation",
    )
    g.add_argument("--concurrency", type=int, help="matches in flight (default: the CPU count, at least 2)")
    g.add_argument("--store", help="the SQLite results file (default: reports/NAME.sqlite)")
    add_time_control_overrides(p)
    r = p.add_argument_group("running")
    r.add_argument(
        "--resume", action="store_true",
        help="play only the matches missing from the store; --store S --resume alone resumes the tournament kept in S",
    )  # fmt: skip
    r.add_argument("--shard", metavar="K/N", help="play only shard K of N (merge the stores with arena merge)")
    r.add_argument("--quiet", action="store_true", help="no live progress, only the final standings")
    r.add_argument("--events", type=Path, metavar="FILE", help="append a JSON-lines event stream to FILE")
    r.add_argument("--logs", type=Path, help="agents' stderr logs (default: STORE-logs next to the store)")
    r.add_argument("--no-report", action="store_true", help="do not write the HTML report at the end")
    add_sandbox(r)
    add_cluster(r)


def config_from_args(args: argparse.Namespace) -> TournamentConfig:
    overrides = {
        "name": args.name,
        "format": args.format,
        "agents": [a.strip() for a in args.agents.split(",")] if args.agents else None,
        "challenger": args.challenger,
        "pairs": args.pairs,
        "seed": args.seed,
        "secret_file": args.secret_file,
        "variant": args.variant,
        "concurrency": args.concurrency,
        "store": args.store,
        "cluster": args.cluster,
        "seating": args.seating,
    }
    tc_flags = time_control_overrides(args)
    if args.config is None and not args.agents:
        if args.store and args.resume:
            return config_from_store(Path(args.store), overrides, tc_flags)
        raise UserError(
            "give a CONFIG.toml or --agents, or --store STORE --resume to go on with a stored tournament "
            "(see arena tournament --help)"
        )
    return load_config(args.config, overrides, tc_flags)


def config_from_store(path: Path, overrides: dict[str, Any], tc_flags: dict[str, Any]) -> TournamentConfig:
    """The config of the tournament kept in the store at ``path`` (its identity in ``meta``,
    its agents' folders), with the flags given laid over it: what ``--store S --resume``
    goes on with. A flag that changes the identity is then refused by the store."""
    with Store(path, create=False) as store:
        identity = store.config
        rows = {a["name"]: a for a in store.agents()}
        compare = store.compare_settings()
    if identity is None:
        raise UserError(f"--store {path}: holds no tournament yet; give a CONFIG.toml or --agents")
    if identity.get("format") == "ladder":
        raise UserError(f"--store {path}: is a ladder's store; go on with arena ladder run --ladder FOLDER")
    if compare is not None:
        raise UserError(f"--store {path}: holds an arena compare run; go on with arena compare NEW OLD --store {path} "
                        "--resume")  # fmt: skip
    stored: dict[str, Any] = {
        "format": identity["format"],
        "agents": [_stored_agent(name, rows.get(name), path) for name in identity["agents"]],
        "challenger": identity.get("challenger"),
        "pairs": identity["pairs"],
        "seed": None if identity["seed"] == "secret" else identity["seed"],
        "variant": identity["variant"],
        "store": str(path),
        "seating": identity.get("seating"),
    }
    flagged = {k: v for k, v in overrides.items() if v is not None}
    if "secret_file" in flagged:
        stored["seed"] = None
    tc = {**identity["time_control"], **{k: v for k, v in tc_flags.items() if v is not None}}
    return load_config(None, {**stored, **flagged}, tc)


def _stored_agent(name: str, row: dict[str, Any] | None, store: Path) -> str:
    """Where the stored agent ``name`` is now: its recorded folder (or a manifest of that
    name in it), else the name looked up as usual. The store checks its content hash."""
    if row is not None:
        folder = Path(row["folder"])
        for manifest in [folder / MANIFEST, *sorted(folder.glob("*.toml"))]:
            try:
                if manifest.is_file() and load_manifest(manifest).name == name:
                    return str(manifest if manifest.name != MANIFEST else folder)
            except UserError:
                continue
    try:
        resolve(name)
    except UserError:
        where = f"its folder {row['folder']} " if row else ""
        raise UserError(f"--store {store}: agent {name!r} of this tournament is gone ({where}not found); "
                        "give the config with --agents") from None  # fmt: skip
    return name


def code_version() -> str:
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{__version__}+{sha}" if sha else __version__


def resume_command(cfg: TournamentConfig, shard_spec: str | None, argv: list[str]) -> str:
    """The command line that goes on with this tournament: the store alone for a tournament
    made from flags (the store keeps its config), else the same command with ``--resume``."""
    if cfg.source == "flags":
        words = ["arena", "tournament", "--store", str(cfg.store), "--resume"]
        words += ["--shard", shard_spec] if shard_spec else []
        words += [] if cfg.sandbox.enabled else ["--no-sandbox"]
        words += ["--cluster", cfg.cluster] if cfg.cluster else []
    else:
        words = ["arena", *argv[1:]] + ([] if "--resume" in argv else ["--resume"])
    return shlex.join(words)


def run(args: argparse.Namespace) -> int:
    cfg = config_from_args(args)
    cfg = dataclasses.replace(cfg, sandbox=sandbox_policy(args, cfg.sandbox))
    return run_config(cfg, resume=args.resume, shard_spec=args.shard, quiet=args.quiet, events=args.events,
                      logs=args.logs, report=not args.no_report)  # fmt: skip


def run_config(
    cfg: TournamentConfig,
    *,
    resume: bool = False,
    shard_spec: str | None = None,
    quiet: bool = False,
    events: Path | None = None,
    logs: Path | None = None,
    argv: list[str] | None = None,
    report: bool = True,
    warn_seed: bool = True,
) -> int:
    """Validate, build, open the store and play; prints the standings. The exit status.
    ``warn_seed``: warn that an explicit seed is guessable when agents run sandboxed."""
    argv = argv if argv is not None else sys.argv
    shard([], shard_spec)  # a bad --shard is refused before the store is made
    cpus = os.cpu_count() or 1
    if cfg.concurrency > cpus and cfg.time_control.clock == "wall":
        print(
            f"arena: warning: {cfg.concurrency} matches in flight let up to {cfg.concurrency} agents think at once "
            f"on {cpus} CPUs; wall-clock time controls are then unfair (consider --clock cpu)",
            file=sys.stderr,
        )
    target = None
    if cfg.cluster:  # refused before the store is made: a bad address, or no Dask here
        from ..tournament.cluster import parse_target, require_dask

        target = parse_target(cfg.cluster, "--cluster" if cfg.source == "flags" else f"{cfg.source}: field 'cluster'")
        require_dask()
    else:  # on a cluster, each worker checks its own toolchain and builds there
        build_all(list(cfg.agents))
    agent_rows = [m.row() for m in cfg.agents]
    with Store(cfg.store) as store:
        cfg = bind_tournament(cfg, store)
        specs = shard(cfg.schedule(), shard_spec)
        store.bind_config(cfg.identity(), cfg.config_hash)
        store.bind_agents(agent_rows)
        have = store.done_ids()
        mine = [s for s in specs if s.match_id in have]
        if mine and not resume:
            raise UserError(
                f"{cfg.store} already holds {len(mine)} matches of this tournament; "
                "add --resume to play the missing ones, or choose another --store"
            )
        if warn_seed and not cfg.secret and cfg.sandbox.enabled:
            print(explicit_seed_warning(cfg.root), file=sys.stderr)
        run_id = store.start_run(code_version(), shard_spec, argv)
        logs = logs or cfg.store.with_suffix("").with_name(cfg.store.stem + "-logs")
        logs.mkdir(parents=True, exist_ok=True)
        private(logs)
        log = EventLog(events) if events else None
        unplayed = store.unplayed_ids()  # lost before play (an agent did not start): played again
        mine = [s for s in mine if s.match_id not in unplayed]
        mine_ids = {s.match_id for s in mine}
        rows = [r for r in store.matches() if r["id"] in mine_ids]
        progress = Progress(len(specs), len(mine), rows, cfg.names)
        if log:
            log.emit("run_started", config=cfg.identity(), config_hash=cfg.config_hash, total=len(specs),
                     done=len(mine), shard=shard_spec, store=str(cfg.store))  # fmt: skip
        if not quiet:
            where = f" (shard {shard_spec})" if shard_spec else ""
            on = f" on Dask cluster {target}" if target else ""
            print(
                f"{cfg.format} of {', '.join(cfg.names)}: {len(specs)} matches{where}, "
                f"{len(specs) - len(mine)} to play, {cfg.concurrency} at a time{' per worker' if target else ''}{on}; "
                f"store {cfg.store}",
                file=sys.stderr,
            )

        def finished(f: Finished) -> None:
            progress.finished(f)
            if log:
                log.emit("match_finished", **match_event(f))
                if f.record.forfeit:
                    fo = f.record.forfeit
                    log.emit("fault", match_id=f.spec.match_id, agent=f.spec.seats[fo.seat], seat=fo.seat,
                             fault=fo.code, detail=fo.detail, deal=fo.deal)  # fmt: skip

        async def main() -> int:
            async with trio.open_nursery() as nursery:
                if not quiet:
                    nursery.start_soon(progress.display)
                n = await run_tournament(cfg, specs, store, run_id, on_finished=finished, logs=logs, sandbox=sandbox,
                                         warn=lambda line: progress.note(f"arena: {line}"))  # fmt: skip
                nursery.cancel_scope.cancel()
            return n

        cluster_error: UserError | None = None
        try:
            if target is not None:
                played = _play_tournament_on_cluster(target, cfg, specs, store, run_id, progress, log, quiet, finished,
                                                     logs)  # fmt: skip
            else:
                hide = [Path(cfg.source)] if cfg.source != "flags" else []
                with Sandbox(cfg.sandbox, hide=hide + [cfg.secret_file] if cfg.secret_file else hide) as sandbox:
                    played = trio.run(main)
        except UserError as e:
            if target is None:
                raise
            cluster_error, stop = e, None  # a lost scheduler, a worker's missing toolchain: said below
        except BaseException as e:
            if not interrupted(e):
                raise
            stop = e
        else:
            stop = None
        finally:
            store.finish_run(run_id)
            if log:
                log.emit("run_finished", played=progress.played, done=progress.done, total=len(specs))
                log.close()
        store.verify()  # every match written is there, in the file that was opened, whole
        if cluster_error is not None:
            if not quiet and progress.tty:
                progress.stream.write("\n")
            ids = {s.match_id for s in specs}
            stored = sum(1 for i in store.done_ids() if i in ids)
            raise UserError(f"{cluster_error}; {stored} of {len(specs)} matches are in {cfg.store}; resume with: "
                            f"{resume_command(cfg, shard_spec, argv)}")  # fmt: skip
        if stop is not None:
            if not quiet and progress.tty:
                progress.stream.write("\n")
            ids = {s.match_id for s in specs}
            stored = sum(1 for i in store.done_ids() if i in ids)
            raise KeyboardInterrupt(
                f"{stored} of {len(specs)} matches are in {cfg.store}; resume with: "
                f"{resume_command(cfg, shard_spec, argv)}"
            ) from None
        if not quiet:
            progress.draw()
        ids = {s.match_id for s in specs}
        table = standings([r for r in store.matches() if r["id"] in ids], cfg.names)
        print(format_standings(table, tables=cfg.players > 2))
        print(f"\n{played} matches played now, {progress.done} of {len(specs)} in the store: {cfg.store}")
        lost = len(ids & store.unplayed_ids())
    if report:
        from ..report.html import build_report

        print(f"report: {build_report(cfg.store, cfg.store.parent / cfg.store.stem)}")
    if lost:  # an agent could not be started: not a finished tournament
        print(
            f"arena: {lost} of {len(specs)} matches were not played (an agent could not be started; the cause is "
            f"above); once it is fixed, play them with: {resume_command(cfg, shard_spec, argv)}",
            file=sys.stderr,
        )
        return 1
    return 0


def play_cluster(
    target: Any,
    cfg: TournamentConfig,
    specs: list,
    store: Store,
    run_id: int,
    *,
    finished: Callable[[Finished], None],
    note: Callable[[str], None],
    warn: Callable[[str], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    log: EventLog | None = None,
    tick: Callable[[], None] | None = None,
    chunk_size: int | None = None,
    logs: Path | None = None,
) -> tuple[int, Any]:
    """Play the specs not yet stored on the Dask cluster ``target`` (`arena.tournament.cluster`),
    writing each match here as its chunk arrives (then ``finished``) and the agents' stderr
    into ``logs``; the event stream gets the cluster's events. How many were played, and
    the `ClusterReport` (per worker)."""
    from ..tournament.cluster import ClusterReport, connect, event_hooks, play_on_cluster

    done = store.done_ids() - store.unplayed_ids()  # lost before play: played again, as in a local run
    todo = [s for s in specs if s.match_id not in done]
    report = ClusterReport()

    def write(f: Finished) -> None:
        write_finished(store, run_id, f)
        finished(f)

    with connect(target) as client:
        if log:
            log.emit("cluster", target=str(target), workers=sorted(client.nthreads(callback_timeout=30)))
        hooks = event_hooks(log.emit) if log else {}
        played = play_on_cluster(client, cfg, todo, write, note=note, warn=warn, tick=tick, should_stop=should_stop,
                                 chunk_size=chunk_size, report=report, logs=logs, **hooks)  # fmt: skip
    return played, report


def _play_tournament_on_cluster(
    target: Any,
    cfg: TournamentConfig,
    specs: list,
    store: Store,
    run_id: int,
    progress: Progress,
    log: EventLog | None,
    quiet: bool,
    finished: Callable[[Finished], None],
    logs: Path | None = None,
) -> int:
    """`play_cluster` with the tournament's live progress, and a line per worker at the end."""
    period = 0.5 if progress.tty else 10.0
    next_draw = time.monotonic() + period

    def tick() -> None:
        nonlocal next_draw
        if not quiet and time.monotonic() >= next_draw:
            next_draw = time.monotonic() + period
            progress.draw()

    note = progress.note if not quiet else (lambda line: print(line, file=sys.stderr, flush=True))
    played, report = play_cluster(target, cfg, specs, store, run_id, finished=finished, note=note, log=log,
                                  tick=tick, logs=logs)  # fmt: skip
    if not quiet:
        progress.note(f"{report.chunks} chunks of up to {report.chunk_pairs} duplicate pairs on {target}")
        for line in report.lines():
            progress.note(line)
    return played
