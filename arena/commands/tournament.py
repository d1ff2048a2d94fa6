"""``arena tournament [CONFIG.toml]``: a seeded, resumable tournament into a SQLite store.

Given no ``--seed``, the root seed is a secret drawn for the store and kept only there
(`arena.secret`); ``--secret-file`` gives shards, or a replay of a published competition,
the same secret without putting it on a command line.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import trio

from .. import __version__
from ..agents import build_all
from ..errors import UserError
from ..options import add_sandbox, add_time_control_overrides, sandbox_policy, time_control_overrides
from ..progress import EventLog, Progress, match_event
from ..runner import Finished, run_tournament
from ..sandbox import Sandbox, private
from ..schedule import FORMATS, TournamentConfig, load_config, shard
from ..secret import bind_tournament, explicit_seed_warning
from ..standings import format_standings, standings
from ..store import Store


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", type=Path, help="a TOML config (every field can also be given as a flag)")
    g = p.add_argument_group("the tournament (override the config)")
    g.add_argument("--name", help="names the default store reports/NAME.sqlite")
    g.add_argument("--format", choices=FORMATS)
    g.add_argument("--agents", help="comma-separated agent names or folders")
    g.add_argument("--challenger", help="gauntlet: the agent that meets all the others")
    g.add_argument("--pairs", type=int, help="duplicate pairs per pairing (two matches each)")
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
    g.add_argument("--variant", help="rule preset")
    g.add_argument("--concurrency", type=int, help="matches in flight (default: the CPU count)")
    g.add_argument("--store", help="the SQLite results file")
    add_time_control_overrides(p)
    r = p.add_argument_group("running")
    r.add_argument("--resume", action="store_true", help="play only the matches missing from the store")
    r.add_argument("--shard", metavar="K/N", help="play only shard K of N (merge the stores with arena merge)")
    r.add_argument("--quiet", action="store_true", help="no live progress, only the final standings")
    r.add_argument("--events", type=Path, metavar="FILE", help="append a JSON-lines event stream to FILE")
    r.add_argument("--logs", type=Path, help="agents' stderr logs (default: next to the store)")
    r.add_argument("--no-report", action="store_true", help="do not write the HTML report at the end")
    add_sandbox(r)


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
    }
    tc_flags = time_control_overrides(args)
    if args.config is None and not args.agents:
        raise UserError("give a CONFIG.toml or --agents (see arena tournament --help)")
    return load_config(args.config, overrides, tc_flags)


def code_version() -> str:
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
            cwd=Path(__file__).resolve().parent,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        sha = ""
    return f"{__version__}+{sha}" if sha else __version__


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
    shard([], shard_spec)  # a bad --shard is refused before the store is made
    cpus = os.cpu_count() or 1
    if cfg.concurrency > cpus and cfg.time_control.clock == "wall":
        print(
            f"arena: warning: {cfg.concurrency} matches in flight let up to {cfg.concurrency} agents think at once "
            f"on {cpus} CPUs; wall-clock time controls are then unfair (consider --clock cpu)",
            file=sys.stderr,
        )
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
        run_id = store.start_run(code_version(), shard_spec, argv if argv is not None else sys.argv)
        logs = logs or cfg.store.with_suffix("").with_name(cfg.store.stem + "-logs")
        logs.mkdir(parents=True, exist_ok=True)
        private(logs)
        log = EventLog(events) if events else None
        mine_ids = {s.match_id for s in mine}
        rows = [r for r in store.matches() if r["id"] in mine_ids]
        progress = Progress(len(specs), len(mine), rows, cfg.names)
        if log:
            log.emit("run_started", config=cfg.identity(), config_hash=cfg.config_hash, total=len(specs),
                     done=len(mine), shard=shard_spec, store=str(cfg.store))  # fmt: skip
        if not quiet:
            where = f" (shard {shard_spec})" if shard_spec else ""
            print(
                f"{cfg.format} of {', '.join(cfg.names)}: {len(specs)} matches{where}, "
                f"{len(specs) - len(mine)} to play, {cfg.concurrency} at a time; store {cfg.store}",
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
                n = await run_tournament(cfg, specs, store, run_id, on_finished=finished, logs=logs, sandbox=sandbox)
                nursery.cancel_scope.cancel()
            return n

        try:
            hide = [Path(cfg.source)] if cfg.source != "flags" else []
            with Sandbox(cfg.sandbox, hide=hide + [cfg.secret_file] if cfg.secret_file else hide) as sandbox:
                played = trio.run(main)
        finally:
            store.finish_run(run_id)
            if log:
                log.emit("run_finished", played=progress.played, done=progress.done, total=len(specs))
                log.close()
        store.verify()  # every match written is there, in the file that was opened, whole
        if not quiet:
            progress.draw()
        ids = {s.match_id for s in specs}
        table = standings([r for r in store.matches() if r["id"] in ids], cfg.names)
        print(format_standings(table))
        print(f"\n{played} matches played now, {progress.done} of {len(specs)} in the store: {cfg.store}")
    if report:
        from ..report import build_report

        print(f"report: {build_report(cfg.store, cfg.store.parent / cfg.store.stem)}")
    return 0
