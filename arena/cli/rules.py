"""``arena rules``: the presets and every flag with its allowed values."""

from __future__ import annotations

import argparse
import json

from ..game.variant import FLAG_VALUES, PRESETS


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the presets as JSON")


def run(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps({name: v.to_dict() for name, v in PRESETS.items()}, indent=2))
        return 0
    names = list(PRESETS)
    print(f"{'flag':<24}" + "".join(f"{n:<16}" for n in names) + "allowed")
    for flag, allowed in FLAG_VALUES.items():
        row = "".join(f"{_show(getattr(PRESETS[n], flag)):<16}" for n in names)
        print(f"{flag:<24}{row}{' | '.join(_show(a) for a in allowed)}")
    print(f"{'target':<24}" + "".join(f"{PRESETS[n].target:<16}" for n in names) + "1..99")
    return 0


def _show(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
