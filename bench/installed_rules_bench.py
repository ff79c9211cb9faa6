#!/usr/bin/python3
"""Installed rules read from the switches vs stored (issue 25 item 3): times, on the embedded host with real OVS and
agents, the submit, a GET of the chain's classes and the DELETE of FW(N)->NAPT->LB on paper-fig3 (rounds after a warm-up),
and on paper-fig5 the controller's own reroute after the s1-s3 link goes down (the time it reports in the chain's reason)
and the DELETE after it. Run it on two checkouts (REPO) in one lock hold to compare them.
usage: bench/installed_rules_bench.py REPO [N] [ROUNDS]"""
import json
import sys
import time
from pathlib import Path

repo = Path(sys.argv[1]).resolve()
n = int(sys.argv[2]) if len(sys.argv) > 2 else 4000
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
sys.path.insert(0, str(repo / "deploy" / "demo"))
sys.path.insert(0, str(repo / "topologies"))
from metron_demo import scenario  # noqa: E402
from metron_demo.session import Session  # noqa: E402

out = {"repo": str(repo), "rules": n, "delete_ms": [], "get_ms": [], "submit_ms": []}
with Session("paper-fig3", log=lambda m: None) as s:
    scenario.deploy(s, "warmup", n)
    s.host.call("DELETE", "/chains/warmup")
    for i in range(rounds):
        t0 = time.monotonic()
        scenario.deploy(s, f"r{i}", n)
        out["submit_ms"].append(round((time.monotonic() - t0) * 1000, 1))
        t0 = time.monotonic()
        s.host.call("GET", f"/chains/r{i}/classes")
        out["get_ms"].append(round((time.monotonic() - t0) * 1000, 1))
        before = scenario.metron_rule_count(s, "s1")
        t0 = time.monotonic()
        s.host.call("DELETE", f"/chains/r{i}")
        out["delete_ms"].append(round((time.monotonic() - t0) * 1000, 1))
        out.setdefault("rules_on_s1_before", before)
        out.setdefault("rules_on_s1_after", []).append(scenario.metron_rule_count(s, "s1"))
print(json.dumps(out))

# reroute: paper-fig5, the controller's own reroute (no groups) after the direct s1-s3 link goes down; the time is
# the one the controller reports in the chain's reason ("rerouted after ... (recomputed|from the backup ..., N ms)")
import re  # noqa: E402
from metron_topo import launcher  # noqa: E402
out["reroute_ms"], out["reroute_how"], out["delete_after_reroute_ms"] = [], [], []
for i in range(2):
    with Session("paper-fig5", log=lambda m: None, host_args=["--failover-groups", "off"]) as s:
        scenario.deploy(s, "warm", 200)
        s.host.call("DELETE", "/chains/warm")
        scenario.deploy(s, "rr", n)
        launcher.set_port(s.state, "s1", 2, up=False)
        deadline = time.monotonic() + 60
        reason = ""
        while time.monotonic() < deadline:
            reason = s.host.call("GET", "/chains/rr").get("reason", "")
            if "rerouted" in reason:
                break
            time.sleep(0.2)
        m = re.search(r"\((.*?), (\d+) ms\)", reason)
        out["reroute_ms"].append(int(m.group(2)) if m else None)
        out["reroute_how"].append(m.group(1) if m else reason)
        t0 = time.monotonic()
        s.host.call("DELETE", "/chains/rr")
        out["delete_after_reroute_ms"].append(round((time.monotonic() - t0) * 1000, 1))
print(json.dumps(out))
