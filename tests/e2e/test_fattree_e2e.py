"""Metron at fat-tree scale on one machine: k=4 (20 OVS switches, 16 servers each with its own agent), the
embedded host placing FW->NAPT->LB with power of two choices, real packets from one pod to another."""
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_demo import scenario  # noqa: E402
from metron_demo.session import Session  # noqa: E402

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


def test_a_chain_runs_across_a_fat_tree_with_sixteen_agents(tmp_path):
    with Session("fattree-k4", run_root=tmp_path, log=lambda m: None) as s:
        servers = s.host.call("GET", "/servers")["servers"]
        assert len(servers) == 16, f"the host sees {len(servers)} of the 16 servers"
        out = scenario.run(s, n_rules=100, log=lambda m: None)
        assert out.ok, "\n".join(out.lines)

        placed = [p for p in s.host.call("GET", "/placements")["placements"] if p["chain"] == "fw-napt-lb"]
        assert len(placed) == 1
        server = placed[0]["server"].split(":", 1)[1]
        assert server in {f"srv{i}" for i in range(1, 17)}
        # Traffic enters at e00 (pod 0) and leaves at e31 (pod 3): the ingress switch holds the firewall, the
        # egress edge switch a rule delivering the chain's output, and every switch programmed lies on the path.
        assert scenario.metron_rule_count(s, "e00") >= 100
        assert scenario.metron_rule_count(s, "e31") >= 1
        programmed = [n for n, v in s.state["nodes"].items()
                      if v.get("bridge") and scenario.metron_rule_count(s, n)]
        assert len(programmed) < 20, f"rules on every switch, not just a path: {programmed}"
