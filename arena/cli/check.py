"""``arena check AGENT``: the conformance suite, a pass/fail line per item.

The agent runs from the same copy `arena submit` would store (`arena.ladder.submit.stage`: the
folder's files without dot-files and what ``.gitignore`` lists, built in the sandbox),
so a folder that passes here is not refused by ``arena submit`` for a file left out.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

import trio

from ..ladder.submit import LEFT_OUT, left_out, stage
from ..play.conformance import Item, check
from ..runtime.agents import FAMILIES, resolve
from ..runtime.sandbox import Sandbox
from .options import add_sandbox, sandbox_policy


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent", help="a folder with agent.toml, or a manifest name")
    p.add_argument(
        "--logs", type=Path, default=Path("reports/logs"), help="agents' stderr logs (default: reports/logs)"
    )
    add_sandbox(p)


def run(args: argparse.Namespace) -> int:
    manifest = resolve(args.agent)
    print(f"checking {manifest.label} ({manifest.folder})")
    if manifest.variants != FAMILIES:
        print(f"plays only {', '.join(manifest.variants)} (field 'variants'): the other games are not checked")
    args.logs.mkdir(parents=True, exist_ok=True)

    def show(item: Item) -> None:
        print(f"{'PASS' if item.ok else 'FAIL'}  {item.name}: {item.detail}", flush=True)

    staging = Path(tempfile.mkdtemp(prefix="arena-check-"))
    try:
        with Sandbox(sandbox_policy(args)) as sandbox:
            copy = stage(manifest, staging / "agent", sandbox, 300.0)
            missing = left_out(manifest, copy.folder)
            if missing:
                print(f"note: the agent runs without {', '.join(missing)} ({LEFT_OUT}; arena submit stores the same)")
            if manifest.build:
                print(f"PASS  build: {' '.join(manifest.build)}")
            items = trio.run(lambda: check(copy, show, logs=args.logs, sandbox=sandbox))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    failed = sum(not i.ok for i in items)
    print(f"{len(items) - failed} passed, {failed} failed")
    return 0 if failed == 0 else 1
