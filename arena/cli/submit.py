"""``arena submit PATH [--ladder DIR]``: validate, build, check and enter an agent."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..ladder import rounds as ladder
from ..ladder.submit import submit
from ..runtime.sandbox import require_isolation
from .options import add_sandbox, add_unsafe, sandbox_policy


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", type=Path, help="the agent's folder (or its manifest file)")
    p.add_argument("--ladder", type=Path, help="the ladder to enter it in (without: only check it)")
    add_sandbox(p)
    add_unsafe(p)


def run(args: argparse.Namespace) -> int:
    cfg = ladder.load(args.ladder) if args.ladder else None
    base = cfg.sandbox if cfg else None
    policy = sandbox_policy(args, base)
    if cfg is not None:  # its build runs in the sandbox, and then it plays the ladder's agents
        require_isolation(policy, args.unsafe_sandbox, f"ladder {cfg.name!r}")
    result = submit(args.path, cfg, policy=policy)
    if result.status == "checked":
        print(f"{result.key}: valid, built and conformant; add --ladder DIR to enter it")
    elif result.status == "unchanged":
        print(f"{result.key}: already in the ladder with this content; nothing changed ({result.folder})")
    else:
        print(f"{result.key}: entered in {args.ladder} ({result.folder}); it plays from the next round")
        for key in result.retired:
            print(f"{key}: retired (replaced by {result.key}); its record stays")
    return 0
