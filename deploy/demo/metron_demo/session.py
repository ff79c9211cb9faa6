"""A running single-machine Metron: an emulated topology plus the embedded host, torn down exactly (the host's
process is recorded in the topology's state file like every agent, so `topo down` also stops it)."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "topologies"))
sys.path.insert(0, str(REPO / "deploy" / "embedded"))

from metron_client import Host  # noqa: E402
from metron_topo import fastnet, launcher, model  # noqa: E402
from metron_topo.ovs import Ovs  # noqa: E402
from metron_topo.ports import free_port  # noqa: E402
from metron_topo.state import State  # noqa: E402

HOST_LAUNCHER = REPO / "deploy" / "embedded" / "metron-host"
EMBEDDED_JAR = REPO / "deploy" / "embedded" / "target" / "metron-embedded.jar"


SWITCH_WAIT_MS = 60_000


class Session:
    """Context manager: topology up + host started on enter; everything down on exit."""

    def __init__(self, topology="paper-fig3", run_root=launcher.DEFAULT_RUN_ROOT, log=print, tls=None, fast=False,
                 host_args=()):
        """tls: agents and host speak mutual TLS (certificates of a lab CA, topologies/metron_topo/certs.py);
        default $METRON_TLS=1. fast: the fast network (OVS-DPDK, vhost-user; topologies/README.md#fast-network).
        host_args: more metron-host options (--failover-groups off, --reroute-delay-ms MS)."""
        self.fast = fast
        self.host_args = list(host_args)
        self.topology = topology
        self.tls = os.environ.get("METRON_TLS") == "1" if tls is None else tls
        self.run_root = Path(run_root)
        self.log = log
        self.state = None
        self.openflow_port = free_port()

    # ---- lifecycle -----------------------------------------------------------------------------------------
    def __enter__(self):
        if not EMBEDDED_JAR.exists():
            raise RuntimeError(f"{EMBEDDED_JAR} missing: run `make build` first")
        self.state = launcher.up(self.topology, run_root=self.run_root,
                                 controller=f"tcp:127.0.0.1:{self.openflow_port}", tls=self.tls, fast=self.fast,
                                 log=self.log)
        try:
            self.data = Path(self.state["run_dir"]) / "host-data"
            self.start_host()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self.state is not None:
            self._keep_logs()
            launcher.down(self.state.path, log=self.log)
            self.state = None

    def _keep_logs(self):
        """Copies the host's and the agents' logs to run_root/logs before the run directory goes: a test's tmp_path
        keeps what the host decided (a failed e2e run is read afterwards; the run directory is removed by down)."""
        if self.run_root == Path(launcher.DEFAULT_RUN_ROOT):
            return  # the shared run root (the demo, the CLI): nothing to keep them for
        run_dir = Path(self.state["run_dir"])
        kept = self.run_root / "logs"
        for f in [run_dir / "host.log", *sorted(run_dir.glob("agent-*.log"))]:
            if f.is_file():
                kept.mkdir(exist_ok=True)
                (kept / f.name).write_bytes(f.read_bytes())

    def start_host(self, timeout=150):
        argv = [str(HOST_LAUNCHER), "--state", str(self.state.path), "--data", str(self.data),
                "--openflow", f"127.0.0.1:{self.openflow_port}", "--http", "127.0.0.1:0",
                # the host is ready only once every switch is connected (or this long has passed)
                "--switch-wait-ms", str(SWITCH_WAIT_MS)] + self.host_args
        logf = open(Path(self.state["run_dir"]) / "host.log", "ab")
        p = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        logf.close()
        if self.fast:
            fastnet.boost(p.pid, fastnet.CONTROLLER_NICE)  # a controller on a machine of its own (see there)
        self.state.record_process("metron-host", p.pid, argv)
        self.host_proc = p
        hostfile = self.data / "host.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if p.poll() is not None:
                log = (Path(self.state["run_dir"]) / "host.log").read_text().strip().splitlines()
                raise RuntimeError(f"metron-host exited ({p.returncode}): " + " | ".join(log[-5:]))
            try:
                if json.loads(hostfile.read_text())["pid"] == p.pid:
                    self.host = Host(self.data, "admin")
                    return
            except (FileNotFoundError, ValueError, KeyError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"metron-host not ready after {timeout} s; see {self.state['run_dir']}/host.log")

    def stop_host(self):
        proc = [p for p in self.state["processes"] if p["name"] == "metron-host"][-1]
        launcher.stop_process(proc, timeout=20)
        self.host_proc.wait()

    def host_pid(self):
        return self.host_proc.pid

    def restart_agent(self, server="srv1"):
        proc = [p for p in self.state["processes"] if p["name"] == f"agent-{server}"][-1]
        launcher.stop_process(proc)
        topo = model.load(self.state["topology_file"])
        launcher.start_agent(self.state, next(s for s in topo.servers if s.name == server))

    # ---- inspection ----------------------------------------------------------------------------------------
    def netns(self, node):
        return self.state["nodes"][node]["netns"]

    def network(self):
        return self.state["network"]

    def flows(self, switch):
        """OVS's own view of a switch's flow table (ovs-ofctl dump-flows lines)."""
        ovs = Ovs(self.state["run_dir"])
        out = ovs.ofctl(self.state["nodes"][switch]["bridge"], "dump-flows").stdout
        return [line.strip() for line in out.splitlines() if "cookie=" in line]

    def groups(self, switch):
        """OVS's own view of a switch's groups with their bucket counters: {group id: (type, [packets per bucket])}
        from ovs-ofctl dump-groups and dump-group-stats."""
        ovs = Ovs(self.state["run_dir"])
        bridge = self.state["nodes"][switch]["bridge"]
        types = {int(m.group(1)): m.group(2) for m in re.finditer(r"group_id=(\d+),type=(\w+)",
                                                                  ovs.ofctl(bridge, "dump-groups").stdout)}
        out = {}
        for line in ovs.ofctl(bridge, "dump-group-stats").stdout.splitlines():
            m = re.search(r"group_id=(\d+)", line)
            if m:
                out[int(m.group(1))] = (types.get(int(m.group(1))),
                                        [int(b) for b in re.findall(r"bucket\d+:packet_count=(\d+)", line)])
        return out

    def agent_stats(self, server="srv1"):
        target = self.state["nodes"][server]["agent"]
        tls = self.state["nodes"][server].get("controller_tls")
        argv = ["java", "-cp", str(EMBEDDED_JAR), "org.metron.embedded.tools.AgentStats", target]
        if tls:
            argv += ["--tls", tls["trustCerts"], tls["certChain"], tls["privateKey"]]
        out = subprocess.run(argv,
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"agent stats from {target} failed: {out.stderr.strip()}")
        return json.loads(out.stdout)

    def rss_mb(self):
        for line in Path(f"/proc/{self.host_proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        raise RuntimeError("host process has no VmRSS")

    def reload_state(self):
        self.state = State.open(self.state.path)


def signal_name(sig):
    return signal.Signals(sig).name if sig else "-"


def env_with_repo():
    return dict(os.environ, PYTHONPATH=f"{REPO / 'topologies'}:{REPO / 'deploy' / 'embedded'}")
