"""Recorded transcripts of whole matches at a table (protocol version 2), for agent authors.

`record_match` plays one match between agent folders, one per seat, and returns every
line each seat received and sent, in the form of ``protocol/examples/greedy-vs-random.jsonl``
(`arena.play.conformance.record_transcript`, which records that two-handed example): one
``{"dir": "to-agent" | "from-agent", "seat": s, "msg": {...}}`` per line, seat by seat.
`RECORDINGS` names the table examples: a three-handed match, a partnership and a bidding
match (``protocol/examples/three-pagat.jsonl``, ``four-pagat.jsonl``, ``four-bidding.jsonl``);
`write` records them again after a change to the messages or the observation, and the
tests check that the files still equal a fresh recording.

A recording is deterministic: the deals follow from the match seed, and each agent's
choices from the seed the referee gives it in ``match_start`` (derived from the match
seed), so the same lineup and seed give the same lines. The one wall-clock field,
``time_left_ms``, changes only for an agent that takes longer than ``move_ms`` over a
decision. The lineup is a parameter (``random`` everywhere for now), so the files can be
recorded again with stronger agents once they play the table games.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import trio

from ..game import Variant, get_variant
from ..protocol.codec import TimeControl
from ..runtime.agents import resolve
from ..runtime.sandbox import Sandbox
from .conformance import EXAMPLES


@dataclasses.dataclass(frozen=True)
class Recording:
    """One example match: its file under ``protocol/examples``, the game, the match seed
    and the agents, seat by seat (names of bundled agents or agent folders)."""

    file: str
    variant: Variant
    seed: int
    agents: tuple[str, ...]
    match_id: str = "example"

    @property
    def path(self) -> Path:
        return EXAMPLES / self.file


#: The recorded table matches. Seeds were picked for short matches (two or three deals) so
#: the files stay small. Random agents rarely make a bid, so a bidding match at the preset's
#: target of 10 runs to the 200-deal limit: the bidding example plays to 3 (its variant is
#: then ``four-bidding+custom``, which the wire says in every message that names it).
RECORDINGS: dict[str, Recording] = {
    "three-pagat": Recording("three-pagat.jsonl", get_variant("three-pagat"), 0, ("random",) * 3),
    "four-pagat": Recording("four-pagat.jsonl", get_variant("four-pagat"), 48, ("random",) * 4),
    "four-bidding": Recording(
        "four-bidding.jsonl", Variant.from_dict({"base": "four-bidding", "target": 3}), 3, ("random",) * 4
    ),
}


async def record_match(
    agents: Sequence[str],
    seed: int,
    variant: Variant,
    *,
    match_id: str = "example",
    time_control: TimeControl | None = None,
    sandbox: Sandbox | None = None,
) -> list[dict[str, Any]]:
    """Play one match, ``agents[s]`` in seat ``s``, and return every line each seat
    received and sent as ``{"dir", "seat", "msg"}``, seat 0 first (each seat's lines in
    the order they crossed its pipe). ``sandbox`` defaults to a new one, as in `duel`."""
    from .duel import duel

    transcripts: list[list[tuple[str, bytes]]] = [[] for _ in agents]
    await duel(
        [resolve(a) for a in agents],
        seed,
        variant,
        time_control or TimeControl(),
        match_id=match_id,
        transcripts=transcripts,
        sandbox=sandbox,
    )
    return [
        {"dir": direction, "seat": seat, "msg": json.loads(line)}
        for seat, lines in enumerate(transcripts)
        for direction, line in lines
    ]


async def record(
    name: str, agents: Sequence[str] | None = None, *, sandbox: Sandbox | None = None
) -> list[dict[str, Any]]:
    """Record the example ``name`` of `RECORDINGS` (with another lineup if ``agents``)."""
    r = RECORDINGS[name]
    return await record_match(agents or r.agents, r.seed, r.variant, match_id=r.match_id, sandbox=sandbox)


def dumps(lines: Sequence[dict[str, Any]]) -> str:
    """The file form of a transcript: one compact JSON object per line."""
    return "".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines)


def load(name: str) -> list[dict[str, Any]]:
    """The recorded example ``name`` as stored."""
    return [json.loads(line) for line in RECORDINGS[name].path.read_text().splitlines() if line.strip()]


def write(names: Sequence[str] | None = None, agents: Sequence[str] | None = None) -> list[Path]:
    """Record the examples ``names`` (default: all) again and write their files."""
    paths = []
    for name in names or list(RECORDINGS):
        lines = trio.run(record, name, agents)
        path = RECORDINGS[name].path
        path.write_text(dumps(lines))
        paths.append(path)
    return paths
