"""Fixtures of the Karaf test: the Metron .oar files, a real Karaf with ONOS 2.7.0's Central bundles and the
stand-in, a real metron-agent. On a failure, karaf.log's WARN/ERROR entries are added to the report."""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import zipfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import karaf_runtime as kr

ROOT = kr.ROOT
STANDIN_JAR = ROOT / "tests/karaf/onos-standin/target/metron-onos-standin-1.0-SNAPSHOT.jar"
AGENT_BIN = Path(os.environ.get("METRON_AGENT_BIN", ROOT / "agent/build/metron-agent"))
# What the Karaf boots with, as an ONOS 2.7 installation has it before any app (tests/karaf/onos-features.xml)
BOOT_FEATURES = ["onos-api", "onos-core", "onos-cli", "onos-rest"]


def manifest(jar_bytes: bytes) -> dict:
    """Main attributes of a jar's MANIFEST.MF (continuation lines joined)."""
    with zipfile.ZipFile(__import__("io").BytesIO(jar_bytes)) as z:
        text = z.read("META-INF/MANIFEST.MF").decode()
    text = re.sub(r"\r?\n ", "", text)
    return dict(line.split(": ", 1) for line in text.splitlines() if ": " in line)


def header_entries(value: str) -> list:
    """The clauses of an OSGi header (commas inside quotes do not split)."""
    out, cur, quoted = [], "", False
    for c in value or "":
        if c == '"':
            quoted = not quoted
        if c == "," and not quoted:
            out.append(cur)
            cur = ""
        else:
            cur += c
    if cur:
        out.append(cur)
    return [c.strip() for c in out if c.strip()]


class Oar:
    """One .oar as ONOS reads it: app.xml (name, required apps, features) and the bundles of its m2/ tree."""

    def __init__(self, path: Path):
        self.path = path
        with zipfile.ZipFile(path) as z:
            app = ET.fromstring(z.read("app.xml"))
            self.bundles = {n: z.read(n) for n in z.namelist() if n.startswith("m2/") and n.endswith(".jar")}
        self.name = app.get("name")
        self.requires = [a for a in (app.get("apps") or "").split(",") if a]
        self.features = [f for f in (app.get("features") or "").split(",") if f]
        self.features_repo = app.get("featuresRepo")

    def symbolic_names(self):
        return [manifest(b)["Bundle-SymbolicName"].split(";")[0] for b in self.bundles.values()]


def find_oars():
    """Every .oar the build produced (controller-app, drivers, drivers-p4, ...), keyed by app name."""
    oars = {}
    for p in sorted(ROOT.glob("*/target/*.oar")):
        o = Oar(p)
        oars[o.name] = o
    return oars


def install_order(oars):
    """Metron apps in the order of their app.xml requirements; apps needing an ONOS app not in this runtime
    (all of ONOS's apps: none is on Maven Central) are left out with the reason."""
    order, skipped, seen = [], {}, set()

    def visit(name, path=()):
        if name in seen or name in skipped:
            return name not in skipped
        if name in path:
            raise AssertionError(f"app.xml requirement cycle: {' -> '.join(path + (name,))}")
        o = oars[name]
        for req in o.requires:
            if req not in oars:
                skipped[name] = f"requires {req}, an ONOS app not in this runtime (ONOS apps are not on Maven Central)"
                return False
            if not visit(req, path + (name,)):
                skipped[name] = f"requires {req}, which is not installed: {skipped[req]}"
                return False
        seen.add(name)
        order.append(o)
        return True

    for name in oars:
        visit(name)
    return order, skipped


@pytest.fixture(scope="session")
def oars():
    found = find_oars()
    assert found, f"no .oar under {ROOT}/*/target: build first (mvn -B -q -DskipTests package)"
    return found


def boot_karaf():
    """A fresh Karaf with the boot features, started; stop() it when done."""
    assert STANDIN_JAR.exists(), f"{STANDIN_JAR} missing: build first (mvn -B -q -DskipTests package)"
    k = kr.Karaf(Path(tempfile.mkdtemp(prefix="hk-karaf-")))
    k.assemble(BOOT_FEATURES, {str(kr.maven_path("org.metron", "metron-onos-standin", "1.0-SNAPSHOT")): STANDIN_JAR})
    t0 = time.time()
    try:
        k.start()
    except Exception as e:
        k.stop()  # a Karaf that never got ready must not outlive the test (it holds the OpenFlow port, 6653)
        raced = k.boot_races()
        if not raced:
            raise
        print(f"Karaf not ready ({raced}): started once more ({str(e).splitlines()[0]})")
        try:
            k.start()
        except Exception:
            k.stop()
            raise
    print(f"Karaf up with {', '.join(BOOT_FEATURES)} in {time.time() - t0:.1f} s")
    return k


def shut_down(k):
    k.stop()
    if os.environ.get("METRON_KEEP_KARAF") != "1":
        shutil.rmtree(k.base, ignore_errors=True)


@pytest.fixture(scope="module")
def karaf(oars):
    k = boot_karaf()
    pytest.karaf_instance = k
    yield k
    pytest.karaf_instance = None
    shut_down(k)


class Agent:
    """A real metron-agent on a DPDK null vdev, as the drivers' Java tests start it (AgentProcess)."""

    def __init__(self, vdev="net_null0", lcores=("-l", "0-1"), port=None, host="127.0.0.1"):
        """port: listen there (an agent restarted where a killed one served), else on a free port."""
        assert AGENT_BIN.exists(), (f"metron-agent not found at {AGENT_BIN}: build it (mkdir -p agent/build && cd "
                                    "agent/build && cmake .. -DCMAKE_BUILD_TYPE=Release && make metron-agent)")
        self.vdev, self.lcores = vdev, lcores
        self.port = port or kr.free_port()
        self.host = host
        self.prefix = f"hk-karaf-{os.getpid()}-{self.port}"
        self.log = Path(tempfile.mkstemp(prefix=self.prefix, suffix=".log")[1])
        cmd = [str(AGENT_BIN), "--listen", f"{host}:{self.port}", "--dpdk", *lcores, "--vdev", vdev,
               "--no-huge", "-m", "256", "--no-pci", "--file-prefix", self.prefix, "--"]
        self.process = subprocess.Popen(cmd, stdout=open(self.log, "w"), stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.time() + 60
        while time.time() < deadline:
            if re.search(r"serving on port (\d+)", self.log.read_text(errors="replace")):
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.05)
        out = self.log.read_text(errors="replace")
        self.kill()
        raise AssertionError(f"metron-agent did not start ({' '.join(cmd)}):\n{out}")

    @property
    def address(self):
        return f"{self.host}:{self.port}"

    def restart(self):
        """A new agent where this one (killed) served: same port, same NIC."""
        self.close()
        return Agent(self.vdev, self.lcores, port=self.port, host=self.host)

    def kill(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        shutil.rmtree(f"/var/run/dpdk/{self.prefix}", ignore_errors=True)

    def close(self):
        self.kill()
        self.log.unlink(missing_ok=True)


@pytest.fixture
def agent():
    a = Agent()
    yield a
    a.close()


@pytest.fixture
def quiet_agent():
    """An agent whose null NIC receives nothing (net_null's no-rx): a chain deployed on it idles as on a link without
    traffic, where a plain null NIC would feed its core packets without end (a busy core on this shared machine).
    Two worker lcores (1 and 2, both on CPU 1 of this 2-CPU machine) so that a chain can split."""
    a = Agent("net_null0,no-rx=1", ("--lcores", "0@0,1@1,2@1"))
    yield a
    a.close()


@pytest.fixture
def two_busy_servers():
    """Two quiet agents with one worker lcore each: a chain on one has no core to split to there."""
    agents = [Agent("net_null0,no-rx=1", ("--lcores", "0@0,1@1")) for _ in range(2)]
    yield agents
    for a in agents:
        a.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    k = getattr(pytest, "karaf_instance", None)
    if report.failed and k is not None:
        report.sections.append(("karaf.log", k.log_problems()))
    c = getattr(pytest, "cluster_instance", None)
    if report.failed and c is not None:
        for n in c.nodes:
            report.sections.append((f"karaf.log of {n}", n.karaf.log_problems(limit=60)))


def _busiest(n=4):
    """The n processes with the most CPU time since they started, as `ps` tells (pid, %cpu, command)."""
    out = subprocess.run(["ps", "-eo", "pid,pcpu,etimes,comm", "--sort=-pcpu", "--no-headers"], capture_output=True,
                         text=True, check=False).stdout.splitlines()
    return "; ".join(" ".join(line.split()) for line in out[:n])


def pytest_sessionstart(session):
    """What else the machine runs as the Karaf tests start (CI's output shows it: a test run slow there for a busy
    machine or a process left behind by an earlier suite tells itself apart from a slow Karaf)."""
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line(f"karaf tests start: load {os.getloadavg()}, busiest: {_busiest()}")
        import cluster_runtime
        capture = session.config.pluginmanager.get_plugin("capturemanager")

        def progress(line):
            # inside a test pytest captures fd 1: the line reaches the terminal only with the capture suspended
            with capture.global_and_fixture_disabled():
                tr.write_line(line)
        cluster_runtime.progress = progress


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """One line per test with its wall time and the load around it, written as it ends (kept in CI's output even
    when a timeout interrupts the run, where pytest's --durations summary is lost)."""
    t0 = time.monotonic()
    yield
    tr = item.config.pluginmanager.get_plugin("terminalreporter")
    if tr is not None:
        tr.write_line(f"  {item.name}: {time.monotonic() - t0:.0f} s (load {os.getloadavg()[0]:.1f})")
