#!/usr/bin/python3
"""End-to-end benchmarks of the single-machine Metron (bench/results/*.json, one per figure, baseline measured
side by side in the same run):
  e2e_submit_to_traffic_fw4000_napt_lb: FW(4000)->NAPT->LB submitted over REST until the first probe packet reaches the
      sink, median of five rounds on a warm host; baseline: `ovs-ofctl --bundle add-flows` of the same chain's offload rules on the same switch
      (installing the switch rules alone, with OVS's own tool).
  e2e_host_rss_10_chains: resident memory of the host with 10 chains deployed; baseline: the same host with
      no chain, measured just before."""
import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metron_demo import scenario  # noqa: E402
from metron_demo.session import REPO, Session  # noqa: E402
from metron_topo.ovs import Ovs  # noqa: E402


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               "unknown CPU")
    mem = int(next(line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal"))) >> 20
    return f"{cpu}, {os.cpu_count()} cores, {mem} GB"


def write(out_dir, name, result):
    out_dir.mkdir(parents=True, exist_ok=True)
    result = {"name": name, **result}  # the figure's name is its file's name, as for every other bench
    (out_dir / f"{name}.json").write_text(json.dumps(result) + "\n")
    print(json.dumps(result))


def ofctl_baseline(session, switch="s1"):
    """Re-installs the switch's current Metron rules with ovs-ofctl --bundle (after deleting them) and times it."""
    ovs = Ovs(session.state["run_dir"])
    bridge = session.state["nodes"][switch]["bridge"]
    lines = [re.sub(r"duration=[^,]*, |n_packets=\d+, |n_bytes=\d+, |send_flow_rem |table=0, ", "", line)
             for line in session.flows(switch) if scenario.METRON_COOKIE.search(line)]
    path = Path(session.state["run_dir"]) / "baseline-flows.txt"
    path.write_text("\n".join(lines) + "\n")
    ovs.ofctl(bridge, "del-flows")
    t0 = time.monotonic()
    ovs.ofctl(bridge, "add-flows", str(path), "--bundle")
    ms = (time.monotonic() - t0) * 1000
    live = len(session.flows(switch))
    if live != len(lines):
        raise RuntimeError(f"baseline installed {live} of {len(lines)} rules")
    return ms, len(lines)


ROUNDS = 5


def submit_to_traffic(out_dir, rules, rounds=ROUNDS):
    with Session("paper-fig3", log=lambda m: None) as s:
        # A warm-up chain of the same size first, deployed and removed: the figure is about deploying a chain on
        # a running controller, not about the JVM's first compile of the code paths a 4000-rule chain takes.
        _, _, _, cold_ms = scenario.deploy(s, "warmup", rules)
        s.host.call("DELETE", "/chains/warmup")
        values, submits, failures = [], [], []
        for i in range(rounds):
            out = scenario.run(s, name=f"bench{i}", n_rules=rules, log=lambda m: None)
            submits.append(out.submit_ms)
            if out.submit_to_traffic_ms is None:
                failures.append("; ".join(out.lines))
            else:
                values.append(out.submit_to_traffic_ms)
            if i < rounds - 1:
                s.host.call("DELETE", f"/chains/bench{i}")
        base_ms, n = ofctl_baseline(s)
    value = sorted(values)[len(values) // 2] if values else None
    write(out_dir, f"e2e_submit_to_traffic_fw{rules}_napt_lb", {
        "description": f"submit FW({rules})->NAPT->LB until traffic flows",
        "value": None if value is None else round(value, 1), "unit": "ms",
        "baseline": f"ovs-ofctl --bundle add-flows of its {n} switch rules",
        "baseline_value": round(base_ms, 1),
        "ratio": None if value is None else round(value / base_ms, 2), "machine": machine(),
        "rounds_ms": [round(v, 1) for v in values], "submit_ms": [round(v, 1) for v in submits],
        "warm_up": f"one {rules}-rule chain deployed and removed first (its REST submit took {cold_ms:.0f} ms)",
        "note": "median of the rounds" if not failures else "no probe reached the sink in some rounds: "
                + " | ".join(failures)})


def rss(out_dir, chains=10):
    with Session("ten-ingress", log=lambda m: None) as s:
        net = s.network()
        time.sleep(2)
        base = s.rss_mb()
        for i in range(chains):  # one chain per ingress point
            body = scenario.chains.fw_napt_lb(f"c{i}", 100, net["ingress"][i], net["egress"][0])[0]
            s.host.call("POST", "/chains", body.encode())
        active = sum(1 for c in s.host.call("GET", "/chains")["chains"] if c["state"] == "ACTIVE")
        value = s.rss_mb()
    write(out_dir, f"e2e_host_rss_{chains}_chains", {
        "description": f"embedded host resident memory, {chains} chains", "value": round(value, 1), "unit": "MB",
        "baseline": "same host, no chain", "baseline_value": round(base, 1), "ratio": round(value / base, 2),
        "machine": machine(), "active_chains": active})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(REPO / "bench" / "results"))
    ap.add_argument("--rules", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument("--chains", type=int, default=10, help="chains of the host memory figure")
    a = ap.parse_args()
    submit_to_traffic(Path(a.out), a.rules, a.rounds)
    rss(Path(a.out), a.chains)
    return 0


if __name__ == "__main__":
    sys.exit(main())
