"""Shared fixtures for the end-to-end tests: every test that builds a topology tears it down and checks that
nothing it created is left behind."""
import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "topologies"))

from metron_topo import launcher  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason="needs root (network namespaces, veths, OVS)")
        for item in items:
            item.add_marker(skip)


@pytest.fixture
def topology(tmp_path):
    """topology(name, **kw) brings a topology up under tmp_path; all are torn down (and leak-checked) after."""
    states = []

    def bring_up(name, **kw):
        kw.setdefault("agents", False)
        state = launcher.up(name, run_root=tmp_path, log=lambda m: None, **kw)
        states.append(state)
        return state

    yield bring_up
    for state in states:
        if state.path.exists():
            launcher.down(state.path, log=lambda m: None)
        assert launcher.leaks(state) == []
