"""Shared fixtures for the end-to-end tests: every test that builds a topology tears it down and checks that
nothing it created is left behind."""
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "topologies"))

from metron_topo import agent, launcher  # noqa: E402

EMBEDDED_JAR = REPO / "deploy" / "embedded" / "target" / "metron-embedded.jar"


def pytest_configure(config):
    config.addinivalue_line("markers", "system: runs the embedded host and real agents (needs `make build`)")
    # A private base directory: pytest prunes old runs under the shared /tmp/pytest-of-<user>, which would delete
    # the OVS run directories of a topology that is still up when someone else runs pytest on this machine.
    if not config.option.basetemp:
        config.option.basetemp = tempfile.mkdtemp(prefix="metron-e2e-")
        config._metron_basetemp = config.option.basetemp


def pytest_unconfigure(config):
    if getattr(config, "_metron_basetemp", None):
        shutil.rmtree(config._metron_basetemp, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    if os.geteuid() != 0:
        skip = pytest.mark.skip(reason="needs root (network namespaces, veths, OVS)")
        for item in items:
            item.add_marker(skip)
    unbuilt = [what for what, missing in (("embedded host", not EMBEDDED_JAR.exists()),
                                          ("agent", agent.binary() is None)) if missing]
    if unbuilt:
        skip = pytest.mark.skip(reason=" and ".join(unbuilt) + " not built (make build)")
        for item in items:
            if item.get_closest_marker("system"):
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
