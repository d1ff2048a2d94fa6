"""What a Dask worker runs for ``arena tournament --cluster``: agents by content, then a chunk.

The client (`arena.tournament.cluster`) ships each agent folder as an `AgentArchive`: a
tar of the folder's own files (`Manifest.files`, build outputs left out), named by the
folder's content hash (`Manifest.content_hash`, the hash the store records) and carrying
the SHA-256 of its bytes. A worker checks both before it uses an archive (the bytes
arrived whole, and what they unpack to is the agent the store names), unpacks and builds
it once per content hash into its cache (``$XDG_CACHE_HOME/sixtysix-arena/cluster``), and
keeps it for later chunks and runs. Unpacking and building happen in a temporary folder
that is renamed into place when done, so two worker processes on one machine never see a
half-built agent (the second's copy is thrown away).

`run_chunk` is the task: it checks the worker's toolchain (`arena.runtime.toolchain`: a
missing ``node`` or ``cc`` fails the task with that one line, naming the worker), and plays
the chunk with `arena.tournament.runner.play_into` in the run's `_Runtime` on this worker
process: the run's sandbox and agent pools, kept across its chunks, the same Trio runner
and pools as a local run, so a match is played exactly as it would be there. It returns the
finished matches; it writes nothing (the client is the only writer).

Nothing here imports Dask at module level: a worker has it, the client may not need to.
"""

from __future__ import annotations

import atexit
import dataclasses
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import trio

from ..errors import UserError
from ..game import Variant
from ..protocol.codec import TimeControl
from ..runtime import toolchain
from ..runtime.agents import Manifest, build, cache_dir, load_manifest
from ..runtime.process import run_build
from ..runtime.sandbox import Policy, Sandbox, require_isolation
from .runner import Finished, Pools, play_into
from .schedule import MatchSpec, TournamentConfig


@dataclasses.dataclass(frozen=True)
class AgentArchive:
    """An agent folder as bytes, addressed by content."""

    name: str  # the agent's name in the tournament (its seat name)
    manifest_file: str  # the manifest's file name in the folder
    content_hash: str  # `Manifest.content_hash` of the folder
    sha256: str  # of ``data``
    data: bytes  # an uncompressed tar of the folder's own files

    @property
    def key(self) -> str:
        """The folder name it unpacks to: name and content, so a new version is a new folder."""
        return f"{self.name}-{self.content_hash[:24]}"


def pack(manifest: Manifest, name: str | None = None) -> AgentArchive:
    """The agent's folder as a reproducible tar (sorted, no times, no owners): its own
    files, and its ``.gitignore``, which says what the build makes (left out of the hash).
    ``name``: its seat name, when not the manifest's (a ladder's entry key, name@version)."""
    buf = io.BytesIO()
    ignore = manifest.folder / ".gitignore"
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for path in manifest.files() + ([ignore] if ignore.is_file() else []):
            info = tar.gettarinfo(str(path), arcname=path.relative_to(manifest.folder).as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if info.isfile():
                with open(path, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    data = buf.getvalue()
    return AgentArchive(name or manifest.name, manifest.manifest_file, manifest.content_hash(),
                        hashlib.sha256(data).hexdigest(), data)  # fmt: skip


def cluster_cache() -> Path:
    """Where a worker keeps the agents it has unpacked and built, one folder per content."""
    return cache_dir().parent / "cluster"


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def unpack(
    archive: AgentArchive, where: str, root: Path | None = None, *, sandbox: Policy | None = None,
    build_timeout_s: float = 300.0,
) -> Manifest:  # fmt: skip
    """The archive's agent on this machine: unpacked and built once (checked, then kept).
    ``sandbox``: build it under that policy, as ``arena submit`` builds submitted code
    (default: as ``arena tournament`` builds trusted agents, unconfined). `UserError`
    naming ``where`` (the worker) when the bytes or the content do not match their
    hashes, a program the agent needs is missing, or the build fails."""
    if hashlib.sha256(archive.data).hexdigest() != archive.sha256:
        raise UserError(f"worker {where}: agent {archive.name!r} arrived damaged (its archive's SHA-256 differs)")
    root = root or cluster_cache()
    target = root / archive.key
    with _locks_guard:
        lock = _locks.setdefault(archive.key, threading.Lock())
    with lock:  # one unpack per worker process; other processes race by rename below
        if not (target / ".arena-built").is_file():
            root.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{archive.key}-", dir=root))
            try:
                with tarfile.open(fileobj=io.BytesIO(archive.data)) as tar:
                    tar.extractall(tmp, filter="data")
                os.chmod(tmp, 0o755)
                manifest = load_manifest(tmp / archive.manifest_file)
                if manifest.content_hash() != archive.content_hash:
                    raise UserError(f"worker {where}: agent {archive.name!r} unpacked to other content than "
                                    "the client sent (content hash differs)")  # fmt: skip
                _require(manifest, where)
                try:
                    _build(manifest, sandbox, build_timeout_s)
                except UserError as e:  # the build's own line: its output's end
                    raise UserError(f"worker {where}: agent {archive.name!r}: {e}") from None
                (tmp / ".arena-built").touch()
                try:
                    os.rename(tmp, target)
                except OSError:  # another worker process on this machine got there first
                    if not (target / ".arena-built").is_file():
                        raise
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    manifest = load_manifest(target / archive.manifest_file)
    _require(manifest, where)  # a cached build, but this worker's PATH may lack its interpreter
    return manifest


def _build(manifest: Manifest, policy: Policy | None, timeout_s: float) -> None:
    """Build ``manifest`` in its folder: unconfined, or in a sandbox of ``policy``."""
    if policy is None:
        trio.run(build, manifest, timeout_s)
        return
    if not manifest.build:
        return
    with Sandbox(policy, warn=lambda line: None) as sandbox:  # what it goes without: said by the run's sandbox
        command, env = sandbox.wrap_build(list(manifest.build), manifest.folder)
        status, output = trio.run(partial(run_build, command, manifest.folder, timeout_s, env=env))
    if status != 0:
        tail = " ".join(output.split())[-400:]
        raise UserError(f"{manifest.manifest_file}: build failed in the sandbox (status {status}): {tail}")


def _require(manifest: Manifest, where: str) -> None:
    try:
        toolchain.require([manifest])
    except UserError as e:
        raise UserError(f"worker {where}: {e}") from None


@dataclasses.dataclass(frozen=True)
class ChunkResult:
    """What a chunk task returns to the client: its matches and who played them how fast."""

    worker: str
    finished: list[Finished]
    started: float  # wall clock on the worker, when the task began
    seconds: float  # the task's length on the worker, unpacking included
    warnings: list[str]  # lines the runner said (an agent taken out of the run)
    #: What the agents' processes wrote to stderr since the last chunk of this run on this
    #: worker returned, by log name (``LABEL-N.log``), at most `LOG_CHUNK_CAP` bytes in all.
    logs: dict[str, bytes] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class RunSettings:
    """What a worker needs to play a run's matches as a local run would: the rules, the
    clock, the root seed of the agents' hello seeds, matches in flight, the sandbox. A
    tournament's comes from its config (`of`); a ladder's from its settings and secret."""

    variant: Variant
    time_control: TimeControl
    seed: int  # the root seed: each agent's hello seed derives from it and its seat name
    concurrency: int
    sandbox: Policy
    config_hash: str  # names the run's tasks
    #: Set when the agents are submitted code (a ladder's): the words name what runs them
    #: (``ladder 'x'``). A worker then builds them in the sandbox, as ``arena submit``
    #: does, and refuses to run them where it cannot isolate them (`require_isolation`),
    #: unless ``unsafe`` (``--unsafe-sandbox``). None: trusted agents (a tournament's).
    submitted: str | None = None
    unsafe: bool = False
    build_timeout_s: float = 300.0  # a build's deadline on a worker

    @classmethod
    def of(cls, cfg: TournamentConfig) -> RunSettings:
        """A tournament's (or a comparison's) settings; its root seed must be bound."""
        return cls(cfg.variant, cfg.time_control, cfg.root, cfg.concurrency, cfg.sandbox, cfg.config_hash)


#: How long a run's agent processes stay up on a worker after its last chunk.
IDLE_S = 30.0
#: The most agents' stderr a chunk carries back to the client (the rest of a flood is cut;
#: each process's log is itself capped by the runtime, `arena.runtime.process.STDERR_CAP`).
LOG_CHUNK_CAP = 1 << 20
#: Deadline for a run's runtime (sandbox, Trio loop) to start, and to stop at exit.
START_S = 60.0


class _Runtime:
    """One run's agent pools on this worker process, kept across that run's chunks.

    A Trio loop in a thread of its own holds the run's `Sandbox` and `Pools`, so the
    agents' processes are started once per worker and run, not once per chunk (a chunk's
    fixed cost is then the task's round trip alone). A chunk is `play_into` called in
    that loop from the task's thread. The loop ends, stopping every process, `IDLE_S`
    after the last chunk, or when the worker process exits (`_stop_all`). Reusing a
    process across chunks is what a local run does across matches: results do not
    depend on it."""

    def __init__(self, cfg: RunSettings):
        self.cfg = cfg
        self.warnings: list[str] = []
        self.busy = 0
        self.last = time.monotonic()
        self.closing = False
        self.stop = False
        self.error: BaseException | None = None
        self.pools: Pools | None = None
        self.token: trio.lowlevel.TrioToken | None = None
        #: the agents' stderr logs on this worker (private), and how much of each was sent
        self.logs = Path(tempfile.mkdtemp(prefix="arena-worker-logs-"))
        self.sent: dict[str, int] = {}
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._thread, name="arena-runtime", daemon=True)
        self.thread.start()
        if not self.ready.wait(START_S):
            raise RuntimeError(f"the arena's runtime did not start in {START_S:g} s")
        if self.error is not None:
            raise self.error

    def _thread(self) -> None:
        try:
            with Sandbox(self.cfg.sandbox, warn=self.warnings.append) as sandbox:
                trio.run(self._main, sandbox)
        except BaseException as e:  # said to the chunk that is waiting, if any
            self.error = e
        finally:
            self.closing = True
            self.ready.set()
            shutil.rmtree(self.logs, ignore_errors=True)

    async def _main(self, sandbox: Sandbox) -> None:
        async with trio.open_nursery() as processes:
            self.pools = Pools.for_config(processes, self.cfg, sandbox, self.logs, self.warnings.append)
            self.token = trio.lowlevel.current_trio_token()
            self.ready.set()
            try:
                while True:
                    await trio.sleep(0.5)
                    with _guard:
                        if self.stop or (not self.busy and time.monotonic() - self.last > IDLE_S):
                            self.closing = True  # no chunk joins it from now on
                            break
            finally:
                self.pools.close()
                processes.cancel_scope.deadline = trio.current_time() + 10  # processes' own grace is shorter

    def play(
        self, specs: list[MatchSpec], manifests: dict[str, Manifest], should_stop: Callable[[], bool] | None = None
    ) -> list[Finished]:
        """Play ``specs`` with the agents ``manifests`` (by seat name) in this runtime (called
        from a task's thread; blocks until done); ``should_stop`` as for `play_into`: yes
        cancels the matches in flight."""
        assert self.pools is not None and self.token is not None
        pools = self.pools
        out: list[Finished] = []

        def retire() -> None:  # in the loop's thread, where pools are made: no chunk is between
            with _guard:
                if self.busy == 1:  # this chunk alone: no other one leases from these pools
                    for name in [n for n in pools.pools if n not in manifests]:
                        pools.close(name)

        try:
            trio.from_thread.run_sync(retire, trio_token=self.token)
            trio.from_thread.run(partial(play_into, should_stop=should_stop), list(specs), manifests, pools,
                                 out.append, trio_token=self.token)  # fmt: skip
        finally:
            with _guard:
                self.busy -= 1
                self.last = time.monotonic()
        return out


    def new_logs(self, cap: int = LOG_CHUNK_CAP) -> dict[str, bytes]:
        """What the agents wrote to stderr since the last call, by log name (``cap`` bytes
        in all; what is left goes with the next chunk)."""
        out: dict[str, bytes] = {}
        with _guard:
            for path in sorted(self.logs.glob("*.log")):
                start = self.sent.get(path.name, 0)
                try:
                    with open(path, "rb") as f:
                        f.seek(start)
                        data = f.read(max(cap, 0))
                except OSError:
                    continue
                if data:
                    out[path.name] = data
                    self.sent[path.name] = start + len(data)
                    cap -= len(data)
        return out


_runtimes: dict[str, _Runtime] = {}
_guard = threading.Lock()


def _runtime(run: str, cfg: RunSettings) -> _Runtime:
    """The runtime of run ``run`` on this worker process, started on its first chunk."""
    with _guard:
        rt = _runtimes.get(run)
        if rt is not None and not rt.closing:
            rt.busy += 1
            return rt
    rt = _Runtime(cfg)
    with _guard:
        rt.busy += 1
        _runtimes[run] = rt
        if not _stopper:
            atexit.register(_stop_all)
            _stopper.append(True)
    return rt


_stopper: list[bool] = []


def _stop_all() -> None:
    """At the worker's exit: stop every runtime and wait (with a deadline) for its processes."""
    with _guard:
        runtimes = list(_runtimes.values())
        for rt in runtimes:
            rt.stop = True
    for rt in runtimes:
        rt.thread.join(timeout=15)


def worker_address() -> str:
    """This Dask worker's address, or ``local`` outside one."""
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return "local"


#: How often a chunk asks whether its run was stopped (a Dask ``Event`` the client sets).
STOP_POLL_S = 1.0


def _stopped(name: str) -> Callable[[], bool]:
    """Whether the client set the Dask ``Event`` ``name`` (its run is over: an SPRT decided,
    an error, Ctrl-C), asked at most every `STOP_POLL_S`: the chunk then stops its matches."""
    from distributed import Event

    event = Event(name)  # bound to this worker's client here, in the task's thread
    state = {"next": 0.0, "set": False}

    def check() -> bool:
        if not state["set"] and time.monotonic() >= state["next"]:
            state["next"] = time.monotonic() + STOP_POLL_S
            try:
                state["set"] = bool(event.is_set())
            except Exception:  # the scheduler is gone: the client stops anyway
                state["set"] = True
        return state["set"]

    return check


def run_chunk(
    cfg: TournamentConfig | RunSettings,
    specs: list[MatchSpec],
    archives: list[AgentArchive],
    run: str,
    stop: str | None = None,
    aliases: dict[str, str] | None = None,
) -> ChunkResult:
    """The task: play ``specs`` of ``cfg`` with the agents of ``archives`` on this worker,
    in the runtime of run ``run`` (its agents' processes kept between its chunks); stop
    early, returning what finished, once the Dask ``Event`` named ``stop`` is set.
    ``aliases``: seat names that are not agent names (seat name -> agent name)."""
    t0, wall = time.monotonic(), time.time()
    settings = cfg if isinstance(cfg, RunSettings) else RunSettings.of(cfg)
    where = worker_address()
    build_in = None
    if settings.submitted is not None:  # checked before any submitted code is unpacked or built
        try:
            require_isolation(settings.sandbox, settings.unsafe, settings.submitted)
        except UserError as e:
            raise UserError(f"worker {where}: {e}") from None
        build_in = settings.sandbox
    manifests = {a.name: unpack(a, where, sandbox=build_in, build_timeout_s=settings.build_timeout_s)
                 for a in archives}  # fmt: skip
    manifests.update({seat: manifests[agent] for seat, agent in (aliases or {}).items()})
    try:
        rt = _runtime(run, settings)
    except UserError as e:  # the sandbox cannot be had here (no bubblewrap, ...)
        raise UserError(f"worker {where}: {e}") from None
    finished = rt.play(specs, manifests, _stopped(stop) if stop else None)
    warnings, rt.warnings[:] = list(rt.warnings), []
    return ChunkResult(where, finished, wall, time.monotonic() - t0, warnings, rt.new_logs())
