"""One match between agent folders, one per seat: start them, play, stop them.

Used by ``arena match`` and the tests; the tournament runner reuses processes instead.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

from ..errors import UserError
from ..game import Variant
from ..protocol.codec import Hello, TimeControl
from ..runtime.agents import Manifest, require_variant
from ..runtime.process import AgentFault, AgentProcess, open_agent
from ..runtime.sandbox import Sandbox
from .referee import Event, MatchRecord, agent_seed, play_match


async def duel(
    manifests: list[Manifest],
    seed: int,
    variant: Variant,
    time_control: TimeControl,
    *,
    match_id: str | None = None,
    logs: Path | None = None,
    on_event: Event | None = None,
    handshake_timeout_s: float = 10.0,
    on_start: Callable[[int, AgentProcess], None] | None = None,
    transcripts: list[list[tuple[str, bytes]]] | None = None,
    hello_seeds: list[int] | None = None,
    sandbox: Sandbox | None = None,
) -> MatchRecord:
    """Start ``manifests[s]`` in seat ``s`` (as many as the variant has seats), play one match.

    ``on_start(seat, process)`` is called once each agent is ready; ``transcripts``, a
    list of one list per seat, receives every line each seat sent and received. ``hello_seeds``
    replaces the seeds the agents get in ``hello`` (a tournament's, for a replay). Each
    agent runs in ``sandbox`` (by default a new one with the default policy)."""
    if len(manifests) != variant.players:
        raise UserError(f"{variant.name} seats {variant.players} agents, got {len(manifests)}")
    require_variant(manifests, variant, "--variant", tables=True)
    match_id = match_id or f"match-{seed}"
    if logs is not None:
        logs.mkdir(parents=True, exist_ok=True)
    async with AsyncExitStack() as stack:
        if sandbox is None:
            sandbox = stack.enter_context(Sandbox())
        seats: list[AgentProcess | AgentFault] = []
        for seat, m in enumerate(manifests):
            hello = Hello.for_game(
                variant.to_dict(), time_control.to_dict(), hello_seeds[seat] if hello_seeds else agent_seed(seed, seat)
            )
            log = logs / f"{match_id}-seat{seat}-{m.name}.log" if logs is not None else None
            try:
                launch = stack.enter_context(sandbox.launch(m))
                agent = await stack.enter_async_context(
                    open_agent(
                        launch,
                        hello,
                        log_path=log,
                        handshake_timeout_s=handshake_timeout_s,
                        transcript=transcripts[seat] if transcripts is not None else None,
                    )
                )
            except AgentFault as f:
                seats.append(f)
                continue
            seats.append(agent)
            if on_start is not None:
                on_start(seat, agent)
        return await play_match(match_id, seed, variant, seats, time_control, on_event=on_event)
