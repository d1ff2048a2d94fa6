"""The test command (scripts/test): the README's second command and what CI runs.

Each test runs the real script (step 1 alone, ``--deps-only``) with a PATH that lacks the
system packages the tests need, so it has something to install, and an ``apt-get`` that
only notes its arguments: it must install what is missing where it can, and otherwise say
in one line what it cannot install, why, and which tests that affects.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from asuser import as_user, can_switch

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "test"
EVERYTHING = "nodejs gcc libc6-dev chromium bubblewrap"


def test_the_readme_test_command_is_the_script_ci_runs():
    lines = ROOT.joinpath("README.md").read_text().split("```")[1].splitlines()
    assert lines[0] == "sh" and len([x for x in lines[1:] if x.strip()]) == 2, lines  # exactly two commands
    assert lines[2] == "scripts/test"
    r = subprocess.run([str(ROOT / ".ci" / "run"), "--print"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == "scripts/test\n", r
    assert os.access(SCRIPT, os.X_OK)


@pytest.fixture
def bare(request):
    """A folder of programs (a PATH) with the shell tools the script uses, this Python as
    python3, and none of node, cc, chromium, bwrap, sudo; world-readable (another user
    may run it)."""
    d = Path(tempfile.mkdtemp(prefix="arena-test-path-"))
    os.chmod(d, 0o755)
    for tool in ("bash", "sed", "env", "id", "cat"):
        os.symlink(shutil.which(tool), d / tool)
    os.symlink(sys.executable, d / "python3")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def fake_apt(bin_dir: Path, log: Path) -> None:
    """An apt-get that notes its arguments and installs nothing."""
    apt = bin_dir / "apt-get"
    apt.write_text(f'#!{shutil.which("bash")}\necho "$*" >> {log}\n')
    apt.chmod(0o755)


def run(bin_dir: Path, argv: list[str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(argv or [str(SCRIPT), "--deps-only"], capture_output=True, text=True, timeout=60, cwd="/",
                          env={"PATH": str(bin_dir), "HOME": "/tmp", "LANG": "C.UTF-8"})  # fmt: skip


def one_line(r: subprocess.CompletedProcess) -> str:
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len([x for x in lines if "cannot install" in x]) == 1, lines
    return next(x for x in lines if "cannot install" in x)


def test_without_apt_get_it_says_what_it_cannot_install_and_which_tests(bare):
    line = one_line(run(bare))
    assert line.startswith(f"scripts/test: cannot install {EVERYTHING} (no apt-get here): "), line
    for effect in ("node-greedy", "c-cautious", "tests/test_report.py", "sandbox tests are skipped", "ladder tests"):
        assert effect in line, (effect, line)


@pytest.mark.skipif(os.geteuid() != 0, reason="root installs the packages itself")
def test_as_root_it_installs_the_missing_packages_with_apt_get(bare, tmp_path):
    log = tmp_path / "apt.log"
    fake_apt(bare, log)
    r = run(bare)
    assert log.read_text().splitlines() == ["update -qq", f"install -y -qq {EVERYTHING}"]
    assert "installing " + EVERYTHING in r.stderr
    # this apt-get installs nothing: what is still missing is said, in one line
    assert f"cannot install {EVERYTHING} (still missing after apt-get)" in one_line(r)


@pytest.mark.skipif(not can_switch(), reason="needs root (and useradd) to run as an unprivileged user")
def test_as_a_user_without_sudo_it_does_not_try(bare):
    log = bare / "apt.log"
    fake_apt(bare, log)
    os.chmod(bare, 0o777)  # the user's apt-get may write its note here
    r = run(bare, as_user([str(SCRIPT), "--deps-only"]))
    assert not log.exists(), log.read_text()  # apt-get was never run
    line = one_line(r)
    assert f"cannot install {EVERYTHING} (not root, and no sudo without a password)" in line, line
