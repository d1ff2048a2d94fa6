"""``arena agents [FOLDER...]``: the agents the arena knows, and where it found them.

Lists every agent that a name on the command line can mean (the folders of ``./agents``,
then the bundled agents: the first of a name wins, and a later one is marked hidden), and
the agents in any FOLDER given (an agent folder, a manifest file, or a folder of agent
folders). For each: name, version, language, command, the games it plays and the
manifest's description. A folder whose manifest is broken is listed with what is wrong,
so that it does not silently vanish from the names.
"""

from __future__ import annotations

import argparse
import json
import shlex
import textwrap
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..runtime.agents import BUNDLED, MANIFEST, load_manifest, search_path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "folders", nargs="*", type=Path, metavar="FOLDER",
        help="also list the agents here: an agent folder, a manifest file, or a folder of agent folders",
    )  # fmt: skip
    p.add_argument("--json", action="store_true", help="print JSON: one object per agent, for scripts")


def _candidates(root: Path, by_name: bool) -> list[Path]:
    """The manifests under ``root``: itself if it is an agent (or a manifest file), else
    each of its sub-folders' ``agent.toml`` and, for a folder given (not one names are
    looked up in), its own manifest files (``folder/other.toml``)."""
    if root.suffix == ".toml" and root.is_file():
        return [root]
    if (root / MANIFEST).is_file():
        return [root / MANIFEST]
    if not root.is_dir():
        raise UserError(f"{root}: no such folder or manifest")
    own = [] if by_name else sorted(root.glob("*.toml"))
    return own + [f / MANIFEST for f in sorted(root.iterdir()) if (f / MANIFEST).is_file()]


def _label(root: Path) -> str:
    if root == BUNDLED.resolve():
        return f"bundled ({root})"
    if root == (Path.cwd() / "agents").resolve():
        return "./agents"
    return str(root)


def listing(folders: list[Path]) -> list[dict[str, Any]]:
    """One entry per manifest found: where it was found, its fields (or ``error``), and
    ``hidden_by``: the folder that a name lookup finds first, if not this one."""
    roots = [(r, True) for r in search_path()] + [(f.resolve(), False) for f in folders if f.resolve() not in
                                                  search_path()]  # fmt: skip
    first: dict[str, str] = {}
    out: list[dict[str, Any]] = []
    for root, by_name in roots:
        for path in _candidates(root, by_name):
            entry: dict[str, Any] = {"found_in": _label(root), "folder": str(path.parent), "by_name": by_name,
                                     "manifest": str(path)}  # fmt: skip
            try:
                m = load_manifest(path if path.name != MANIFEST else path.parent)
            except UserError as e:
                out.append({**entry, "error": str(e)})
                continue
            entry.update(
                name=m.name, version=m.version, language=m.language, command=list(m.command),
                build=list(m.build) if m.build else None, variants=list(getattr(m, "variants", ())),
                description=m.description,
            )  # fmt: skip
            if by_name:
                entry["hidden_by"] = first.get(m.name) if first.get(m.name) != entry["folder"] else None
                first.setdefault(m.name, entry["folder"])
            out.append(entry)
    return out


def format_listing(entries: list[dict[str, Any]]) -> str:
    """The listing as text, grouped by where the agents were found."""
    if not entries:
        return "no agents found: the bundled agents are missing, and there is no ./agents folder"
    good = [e for e in entries if "error" not in e]
    w = max([4, *(len(e["name"]) for e in good)])
    lines: list[str] = []
    group = None
    for e in entries:
        if e["found_in"] != group:
            group = e["found_in"]
            how = "by name or folder" if e["by_name"] else "by folder or manifest path, not by name"
            lines += ["", f"{group}: {how}"] if lines else [f"{group}: {how}"]
        if "error" in e:
            lines.append(f"  {Path(e['folder']).name:<{w}}  BROKEN: {e['error']}")
            continue
        command = " ".join(x if x == "{python}" else shlex.quote(x) for x in e["command"])
        games = "" if len(e["variants"]) != 1 else f"  (plays {e['variants'][0]} only)"
        lines.append(f"  {e['name']:<{w}}  {e['version']:<7}  {e['language']:<10}  {command}{games}")
        notes = [e["description"]] if e["description"] else []
        if e.get("hidden_by"):
            notes.append(f"(the name means {e['hidden_by']}, found first; name this one by its folder)")
        for note in notes:
            lines += textwrap.wrap(note, 100, initial_indent=" " * (w + 4), subsequent_indent=" " * (w + 4))
    lines += ["", "e.g. arena match NAME NAME, arena tournament --agents NAME,FOLDER; "
              "a name is looked up in ./agents first, then the bundled agents"]  # fmt: skip
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    entries = listing(args.folders)
    if args.json:
        print(json.dumps(entries, indent=1))
    else:
        print(format_listing(entries))
    return 0
