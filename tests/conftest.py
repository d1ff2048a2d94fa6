"""Fixtures shared by test files: the browser that pytest-playwright launches."""

from __future__ import annotations

import shutil

import pytest


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """pytest-playwright drives the system Chromium (no browser download)."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "headless Chromium is needed for this test: .ci/run installs Debian's chromium package"
    return {**browser_type_launch_args, "executable_path": exe, "args": ["--no-sandbox"]}
