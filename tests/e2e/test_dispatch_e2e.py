"""Dispatch you can see (issue 15, item 4): a real agent given DPDK vdevs besides its fanout NIC probes each port
at start, picks or refuses a dispatch mode as told, and the embedded host shows what the agent really chose, the
probed capabilities and every refusal in REST /servers, in its CLI (`metron servers`) and in the dashboard's NIC
table. The vdevs are the software PMDs this machine has (net_null, net_ring, net_tap): none can create an rte_flow
QUEUE rule, so what is checked is how each is refused and what is chosen instead.

The extra ports are given to the agent by a wrapper script that prepends the agent options to the launcher's own
command line (the launcher has no option for extra agent flags); everything else is the launcher's agent."""
import json
import stat
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))
sys.path.insert(0, str(REPO / "topologies"))

from metron_demo.session import Session  # noqa: E402
from metron_topo import agent, launcher, model  # noqa: E402
from support import wait_for  # noqa: E402

pytestmark = pytest.mark.system

EXTRA = ["--port", "net_null_dp0", "--dispatch", "net_null_dp0=auto",
         "--port", "net_ring_dp0", "--dispatch", "net_ring_dp0=vmdq",
         "--port", "net_tap_dp0,iface=dptap0", "--dispatch", "net_tap_dp0=auto",
         "--dispatch-fallback"]


def _restart_with_vdevs(s, tmp_path):
    wrapper = tmp_path / "agent-with-vdevs"
    wrapper.write_text("#!/bin/sh\nexec " + agent.binary() + " " + " ".join(EXTRA) + ' "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    proc = [p for p in s.state["processes"] if p["name"] == "agent-srv1"][-1]
    launcher.stop_process(proc)
    topo = model.load(s.state["topology_file"])
    launcher.start_agent(s.state, next(x for x in topo.servers if x.name == "srv1"), binary=str(wrapper))


# Validates a /servers answer against the ServerList schema of the document the host serves (jsonschema, from the
# venv the OpenAPI fuzz uses: deploy/deps/fuzz.requirements.txt).
VALIDATE = """
import json, sys, jsonschema
d = json.load(sys.stdin)
schema = {"$ref": "#/definitions/ServerList", "definitions": d["doc"]["definitions"]}
jsonschema.Draft4Validator(schema).validate(d["body"])
print("conforms")
"""


def _conforms(doc, body):
    venv = subprocess.run([str(REPO / "scripts" / "pyvenv.sh"), "fuzz",
                           str(REPO / "deploy" / "deps" / "fuzz.requirements.txt")],
                          capture_output=True, text=True, timeout=900)
    assert venv.returncode == 0, venv.stderr
    out = subprocess.run([venv.stdout.strip(), "-c", VALIDATE], input=json.dumps({"doc": doc, "body": body}),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "conforms", out.stdout + out.stderr


def test_rest_cli_and_dashboard_show_the_dispatch_the_agent_chose(tmp_path):
    with Session("single", run_root=tmp_path, log=lambda m: None) as s:
        _restart_with_vdevs(s, tmp_path)

        def nics():
            [srv] = s.host.call("GET", "/servers")["servers"]
            if not srv["reachable"]:
                return None
            by_name = {n["name"]: n for n in srv["nics"]}
            return by_name if "net_tap_dp0" in by_name else None

        nics = wait_for(nics, 60, "the restarted agent's vdevs in REST /servers")
        log = (Path(s.state["run_dir"]) / "agent-srv1.log").read_text()
        print(log[-3000:])
        print(json.dumps({k: v["dispatch"] for k, v in nics.items()}, indent=1))

        # the fanout NIC: a kernel interface, not probed, dispatching both tag types
        eth0 = nics["eth0"]["dispatch"]
        assert eth0["mode"] == "fanout" and eth0["tagTypes"] == ["mac", "vlan"], eth0
        assert "capabilities" not in eth0 and "requested" not in eth0 and eth0["refusals"] == [], eth0

        # every mode the REST reports is the one the agent said it chose at start
        for name, nic in nics.items():
            if name != "eth0":
                assert f"metron-agent: port {name} dispatches with {nic['dispatch']['mode']}\n" in log, (name, log)

        # net_null, auto: no rte_flow (ENOSYS), no VMDq, RSS taken
        null = nics["net_null_dp0"]["dispatch"]
        assert null["mode"] == "rss" and null["auto"] and null["summary"] == "rss (auto)", null
        assert "requested" not in null, null
        caps = null["capabilities"]
        assert caps["driver"] == "net_null" and not caps["rteFlow"] and caps["vmdqPools"] == 0, caps
        assert caps["rssOffloads"] != "0x0" and caps["retaSize"] > 0, caps
        assert [r["mode"] for r in null["refusals"]] == ["rte-flow", "vmdq"], null
        assert null["refusals"][0]["reason"] == \
            "port net_null_dp0 has no rte_flow (its driver net_null answers ENOSYS)", null
        assert null["refusals"][1]["reason"].startswith(
            "port net_null_dp0 has no VMDq (its driver reports max_vmdq_pools 0)"), null
        assert null["possible"] == ["rss", "single"], null

        # net_ring asked for VMDq, with --dispatch-fallback: VMDq and RSS refused, single taken
        ring = nics["net_ring_dp0"]["dispatch"]
        assert ring["mode"] == "single" and ring["requested"] == "vmdq" and not ring["auto"], ring
        assert ring["summary"] == "single (asked vmdq)", ring
        assert [r["mode"] for r in ring["refusals"]] == ["vmdq", "rss"], ring
        assert ring["refusals"][1]["reason"] == \
            "port net_ring_dp0 has no RSS over IP/TCP/UDP (its driver offers hash functions 0x0)", ring

        # net_tap, auto: its rte_flow validates a QUEUE rule, but the kernel cannot create it
        tap = nics["net_tap_dp0"]["dispatch"]
        caps = tap["capabilities"]
        assert caps["driver"] == "net_tap" and caps["rteFlow"] and caps["rteFlowQueue"], caps
        assert tap["refusals"][0]["mode"] == "rte-flow", tap
        assert "the port cannot dispatch with rte_flow: NIC net_tap_dp0 refused a group-tag rule (create: " in \
            tap["refusals"][0]["reason"], tap
        # ... VMDq is missing, and RSS (which its driver offers, over multi-queue tap) is what it runs
        assert [r["mode"] for r in tap["refusals"]] == ["rte-flow", "vmdq"], tap
        assert tap["mode"] == "rss" and tap["summary"] == "rss (auto)", tap
        assert tap["possible"] == ["rte-flow", "rss", "single"], tap

        # the answer, with probed ports and refusals, is what the served OpenAPI document says it is
        _conforms(s.host.call("GET", "/swagger.json"), s.host.call("GET", "/servers"))

        # the embedded CLI prints the same
        cli = subprocess.run([str(REPO / "deploy" / "embedded" / "metron"), "--data", str(s.data), "servers"],
                             capture_output=True, text=True, timeout=60)
        assert cli.returncode == 0, cli.stderr
        print(cli.stdout)
        assert "  nic net_ring_dp0 dispatch single (asked vmdq) tags mac, vlan possible single capabilities " \
               "net_ring: no rte_flow; no VMDq; no rss;" in cli.stdout, cli.stdout
        assert "  nic eth0 dispatch fanout tags mac, vlan possible fanout capabilities not probed refused -" \
               in cli.stdout, cli.stdout
        assert "Optional[" not in cli.stdout

        # ... and the dashboard's NIC table (what its page draws from tables.json)
        dashboard = json.loads((s.data / "host.json").read_text())["dashboard"]
        req = urllib.request.Request(dashboard.rstrip("/") + "/tables.json", headers={"Authorization": s.host.auth})
        with urllib.request.urlopen(req, timeout=60) as r:
            table = next(t for t in json.loads(r.read().decode())["tables"] if t["id"] == "Nic")
        rows = {row["nic"]: row for row in (dict(zip(table["columns"], r)) for r in table["rows"])}
        assert rows["net_null_dp0"]["dispatch"] == "rss (auto)", rows
        assert rows["net_tap_dp0"]["dispatch"] == tap["summary"], rows
        assert rows["net_ring_dp0"]["refused"].startswith("vmdq: port net_ring_dp0 has no VMDq"), rows
        assert rows["eth0"]["capabilities"] == "not probed" and rows["eth0"]["refused"] == "-", rows
        assert not any("Optional[" in str(v) for row in rows.values() for v in row.values()), rows
