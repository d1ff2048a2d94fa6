"""What an agent needs from the machine to be built and started, checked before a run.

An agent's manifest names programs: the first word of its ``build`` and of its
``command`` (``node``, ``cc``, ``java``, ...), or a script in its folder whose ``#!`` line
names an interpreter. When one of them is missing, every start of the agent fails the
same way; saying so once, before anything starts, beats a forfeit per match.
`missing` finds what is missing, `require` turns it into one line for the user.

A program is looked up on the PATH the agent gets (the referee's, or the manifest's
``[env]`` PATH), which is the PATH its sandbox gives it too.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UserError

if TYPE_CHECKING:
    from .agents import Manifest

#: How to get the programs agents commonly need, on Debian and Ubuntu.
HINTS = {
    "node": "Debian: apt-get install nodejs",
    "nodejs": "Debian: apt-get install nodejs",
    "cc": "Debian: apt-get install gcc libc6-dev",
    "gcc": "Debian: apt-get install gcc libc6-dev",
    "clang": "Debian: apt-get install clang",
    "c++": "Debian: apt-get install g++",
    "g++": "Debian: apt-get install g++",
    "make": "Debian: apt-get install make",
    "java": "Debian: apt-get install default-jre-headless",
    "javac": "Debian: apt-get install default-jdk-headless",
    "go": "Debian: apt-get install golang-go",
    "cargo": "Debian: apt-get install cargo",
    "rustc": "Debian: apt-get install rustc",
    "python3": "Debian: apt-get install python3",
    "ruby": "Debian: apt-get install ruby",
    "perl": "Debian: apt-get install perl",
    "dotnet": "see https://learn.microsoft.com/dotnet/core/install/linux",
    "deno": "see https://deno.land",
    "bun": "see https://bun.sh",
}


@dataclasses.dataclass(frozen=True)
class Missing:
    """A program an agent needs that this machine does not have (where it looked)."""

    agent: str
    program: str
    step: str  # "start" or "build"
    problem: str  # e.g. "which is not on PATH"

    def line(self) -> str:
        """One sentence for the user: what is missing, for which agent, and how to get it."""
        hint = HINTS.get(os.path.basename(self.program), "install it or put it on PATH")
        step = " to build" if self.step == "build" else ""
        return f"agent {self.agent!r} needs {self.program!r}{step}, {self.problem} ({hint})"


def agent_path(manifest: Manifest) -> str:
    """The PATH the agent's programs are looked up on (and the one it gets)."""
    return dict(manifest.env).get("PATH") or os.environ.get("PATH") or os.defpath


def _interpreter(script: Path) -> str | None:
    """The program a ``#!`` line names (``/usr/bin/env node`` → ``node``), or None."""
    try:
        with open(script, "rb") as f:
            first = f.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return rest[0] if rest else None
    return words[0]


def _check(program: str, manifest: Manifest, step: str, path: str, built: bool) -> Missing | None:
    """Whether ``program`` (a word of the manifest) can be run; a `Missing` if not."""
    if program == "{python}":
        return None
    if "/" not in program:
        if shutil.which(program, path=path) is None:
            return Missing(manifest.name, program, step, "which is not on PATH")
        return None
    target = Path(program) if os.path.isabs(program) else manifest.folder / program
    if not target.exists():
        if built:  # the build makes it (``./agent``): a failed build says why
            return None
        return Missing(manifest.name, program, step, "which does not exist")
    if not os.access(target, os.X_OK):
        return Missing(manifest.name, program, step, "which is not executable (chmod +x)")
    interpreter = _interpreter(target)
    if interpreter is not None:
        return _check(interpreter, manifest, step, path, built=False)
    return None


def missing(manifest: Manifest) -> list[Missing]:
    """The programs ``manifest`` needs (its build's, its command's and their ``#!``
    interpreters) that cannot be found; empty when it has everything."""
    path = agent_path(manifest)
    out = []
    if manifest.build:
        m = _check(manifest.build[0], manifest, "build", path, built=False)
        if m is not None:
            out.append(m)
    m = _check(manifest.command[0], manifest, "start", path, built=bool(manifest.build))
    if m is not None:
        out.append(m)
    return out


def require(manifests: list[Manifest]) -> None:
    """`UserError` naming, in one line, every program these agents need and lack."""
    seen = set()
    lines = []
    for manifest in manifests:
        for m in missing(manifest):
            if (m.agent, m.program) not in seen:
                seen.add((m.agent, m.program))
                lines.append(m.line())
    if lines:
        raise UserError("; ".join(lines))
