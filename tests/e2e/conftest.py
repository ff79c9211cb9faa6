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

# The demo package (Session, scenarios) and the embedded host's Python client, for every test module.
sys.path.insert(0, str(REPO / "deploy" / "demo"))
sys.path.insert(0, str(REPO / "deploy" / "embedded"))

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


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """paper-fig3 with the embedded host and its agents, one per test module."""
    from metron_demo.session import Session
    s = Session("paper-fig3", run_root=tmp_path_factory.mktemp("run"), log=lambda m: None)
    with s:
        yield s
    # Session exit ran launcher.down, which raises if anything it recorded (host and agents included) is left.


@pytest.fixture
def clean(session):
    """Every test starts and ends with no chain deployed."""
    from metron_client import HostError
    yield session
    for c in session.host.call("GET", "/chains")["chains"]:
        try:
            session.host.call("DELETE", "/chains/" + c["name"])
        except HostError:
            pass  # the test that left it has already failed and says why
