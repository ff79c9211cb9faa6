"""Mutual TLS end to end (issue 15, item 3) on paper-fig3: the topology launcher makes a lab PKI
(topologies/metron_topo/certs.py, what deploy/tls/metron-certs makes) and starts the agent with --tls-cert/--tls-key/
--tls-ca; the embedded host reads the controller's files from the topology state (servers[].tls) and deploys a
chain over mutual TLS, whose traffic reaches the sink. A plaintext client is refused by the agent, and a host
trusting another CA is refused too, saying which agent and that TLS failed (REST /servers)."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))
sys.path.insert(0, str(REPO / "bench" / "scaling"))
sys.path.insert(0, str(REPO / "topologies"))

from metron_demo.session import EMBEDDED_JAR, Session  # noqa: E402
from metron_topo import certs  # noqa: E402
import workload  # noqa: E402

CLASSES = 2
PACKETS_PPS = 100

pytestmark = pytest.mark.system


def test_chain_deploys_over_mutual_tls_and_a_wrong_ca_is_refused_naming_the_agent(tmp_path):
    with Session("paper-fig3", run_root=tmp_path, log=lambda m: None, tls=True) as s:
        srv = s.network()["servers"][0]
        assert set(srv["tls"]) == {"trustCerts", "certChain", "privateKey"}, srv
        argv = next(p["argv"] for p in s.state["processes"] if p["name"] == "agent-srv1")
        assert "--tls-ca" in argv and "--tls-cert" in argv and "--tls-key" in argv, argv

        [server] = s.host.call("GET", "/servers")["servers"]
        assert server["reachable"], server
        net = s.network()
        body = workload.chain_json("sealed", net["ingress"][0], net["egress"][0], CLASSES, 1000, auto_scale=False)
        assert workload.submit(s.host, body)["state"] == "ACTIVE"
        capture = workload.Capture(s.netns("sink"), tmp_path / "sink.pcap")
        sender = workload.Sender(s.netns("src"), CLASSES)
        try:
            sender.rate(PACKETS_PPS)
            time.sleep(3)
            sent = sender.finish()
        finally:
            sender.kill()
            pcap, _ = capture.stop()
        arrived = len(workload.read_pcap(pcap).times)
        print(f"over mutual TLS: sent {sum(sent['sent'])}, arrived {arrived}")
        assert sum(sent["sent"]) > 100 and arrived >= 0.95 * sum(sent["sent"]), (sent["sent"], arrived)

        # the agent speaks TLS only: a plaintext client (the stats tool) gets nothing
        plain = subprocess.run(["java", "-cp", str(EMBEDDED_JAR), "org.metron.embedded.tools.AgentStats",
                                s.state["nodes"]["srv1"]["agent"]], capture_output=True, text=True, timeout=60)
        assert plain.returncode != 0, plain.stdout

        # a controller trusting another CA (with a client certificate of that CA) is refused and says so
        s.host.call("DELETE", "/chains/sealed")
        s.stop_host()
        other = certs.make_lab(tmp_path / "other-ca", {})
        s.state.data["network"]["servers"][0]["tls"] = certs.controller_fields(other)
        s.state.save()
        s.start_host()
        deadline = time.monotonic() + 60
        while True:
            [server] = s.host.call("GET", "/servers")["servers"]
            if not server["reachable"] or time.monotonic() > deadline:
                break
            time.sleep(1)
        print("refusal:", server.get("error"))
        assert not server["reachable"], server
        error = server["error"]
        assert srv["agent"] in error, error
        assert any(w in error for w in ("TLS", "SSL", "certificate", "PKIX")), error
