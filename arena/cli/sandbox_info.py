"""``arena sandbox-info``: which sandbox mechanisms this machine gives agent processes."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..errors import UserError, read_toml
from ..runtime.sandbox import Policy, probe


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("config", nargs="?", type=Path, help="a tournament config or ladder.toml whose [sandbox] to show")


def run(args: argparse.Namespace) -> int:
    policy = Policy()
    if args.config is not None:
        data = read_toml(args.config, f"{args.config}: no such config file")
        table = data.get("sandbox", {})
        if not isinstance(table, dict):
            raise UserError(f"{args.config}: field 'sandbox' must be a table, got {table!r}")
        policy = Policy.from_dict(table, f"{args.config}: [sandbox]")
    if not policy.enabled:
        print("sandbox: disabled by the config (agents run as plain processes)")
        return 0
    caps = probe()
    who = "root" if caps.root else f"uid {os.geteuid()}"
    print(f"sandbox for agent processes (referee runs as {who}):")
    lines = caps.lines(policy.limits)
    width = max(len(m) for m, _, _ in lines)
    for mechanism, active, detail in lines:
        print(f"  {'on ' if active else 'OFF'}  {mechanism:<{width}}  {detail}")
    missing = [m for m, ok, _ in lines if not ok]
    if missing:
        print(f"missing: {', '.join(missing)}; runs go on without them and say so once")
    return 0
