"""``arena rules``: every preset (two-, three- and four-handed) and every flag with its allowed values."""

from __future__ import annotations

import argparse
import json

from ..game.variant import ALL_PRESETS, FLAG_VALUES


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the presets as JSON")


def run(args: argparse.Namespace) -> int:
    if args.json:
        print(json.dumps({name: v.to_dict() for name, v in ALL_PRESETS.items()}, indent=2))
        return 0
    names = list(ALL_PRESETS)
    cells = [*names, *(_show(getattr(ALL_PRESETS[n], f)) for n in names for f in FLAG_VALUES)]
    w = max(len(c) for c in cells) + 2  # the widest name or value and a gap: columns never run together
    print(f"{'flag':<24}" + "".join(f"{n:<{w}}" for n in names) + "allowed")
    for flag, allowed in FLAG_VALUES.items():
        row = "".join(f"{_show(getattr(ALL_PRESETS[n], flag)):<{w}}" for n in names)
        print(f"{flag:<24}{row}{' | '.join(_show(a) for a in allowed)}")
    print(f"{'target':<24}" + "".join(f"{ALL_PRESETS[n].target:<{w}}" for n in names) + "1..99")
    print()
    print("Every preset plays under the referee (`arena match`, `arena check`; three and four seats speak")
    print("protocol version 2); tournaments, ratings and ladders are two-handed for now. Their rules:")
    print("docs/RULES.md, docs/rules-*.md. Flags a form does not use are listed with their default and")
    print("ignored (`players` and `deck` must suit the `form`).")
    return 0


def _show(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
