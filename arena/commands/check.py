"""``arena check AGENT``: the conformance suite, a pass/fail line per item."""

from __future__ import annotations

import argparse
from pathlib import Path

import trio

from ..agents import build_all, resolve
from ..conformance import Item, check
from ..options import add_sandbox, sandbox_policy
from ..sandbox import Sandbox


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("agent", help="a folder with agent.toml, or a manifest name")
    p.add_argument(
        "--logs", type=Path, default=Path("reports/logs"), help="agents' stderr logs (default: reports/logs)"
    )
    add_sandbox(p)


def run(args: argparse.Namespace) -> int:
    manifest = resolve(args.agent)
    print(f"checking {manifest.label} ({manifest.folder})")
    args.logs.mkdir(parents=True, exist_ok=True)
    build_all([manifest])
    if manifest.build:
        print(f"PASS  build: {' '.join(manifest.build)}")

    def show(item: Item) -> None:
        print(f"{'PASS' if item.ok else 'FAIL'}  {item.name}: {item.detail}", flush=True)

    with Sandbox(sandbox_policy(args)) as sandbox:
        items = trio.run(lambda: check(manifest, show, logs=args.logs, sandbox=sandbox))
    failed = sum(not i.ok for i in items)
    print(f"{len(items) - failed} passed, {failed} failed")
    return 0 if failed == 0 else 1
