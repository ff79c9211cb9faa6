"""The end-to-end scenario shared by `make demo`, the end-to-end tests and the benchmarks: submit a chain over
REST while a probe is already sending, replay allowed+denied traffic, and check the sink, the switch counters
and the agent counters."""
import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import chains, traffic

METRON_COOKIE = re.compile(r"cookie=0x4d[0-9a-f]{12},")  # app id 0x4d in the top 16 bits (EmbeddedHost.APP_ID)


@dataclass
class Outcome:
    name: str
    rules: int
    submit_ms: float = 0.0
    submit_to_traffic_ms: float = None
    sent: int = 0
    ok: bool = False
    lines: list = field(default_factory=list)


def deploy(session, name, n_rules, cores=1):
    """Submits the FW(n_rules)->NAPT->LB chain; returns (chain json answer, plan, submit start ns, ms)."""
    net = session.network()
    body, plan = chains.fw_napt_lb(name, n_rules, net["ingress"][0], net["egress"][0], cores=cores)
    t0 = time.time_ns()
    chain = session.host.call("POST", "/chains", body.encode())
    return chain, plan, t0, (time.time_ns() - t0) / 1e6


def ingress_switch(session):
    """Name of the switch where the chain's traffic enters (the firewall is offloaded there)."""
    device = session.network()["ingress"][0].split("/")[0]
    return next(n for n, v in session.state["nodes"].items() if v.get("device_id") == device)


def switch_drops(session, switch):
    """Packets OVS dropped by Metron's rules on a switch (its own counters)."""
    total = 0
    for line in session.flows(switch):
        if METRON_COOKIE.search(line) and line.endswith("actions=drop"):
            total += int(re.search(r"n_packets=(\d+)", line).group(1))
    return total


def metron_rule_count(session, switch):
    return sum(1 for line in session.flows(switch) if METRON_COOKIE.search(line))


def run(session, name="fw-napt-lb", n_rules=1000, allowed=12, denied=12, packets_per_flow=4, log=print):
    """The whole path once; Outcome.ok only when every check passed."""
    out = Outcome(name, n_rules)
    work = Path(tempfile.mkdtemp(prefix="metron-demo-", dir=session.state["run_dir"]))
    capture = traffic.Capture(session.netns("sink"), work / "sink.pcap")
    probe = None
    try:
        _, plan = chains.fw_napt_lb(name, n_rules, "x", "y")
        probe = traffic.Probe(session.netns("src"), plan).start()
        sw = ingress_switch(session)
        drops_before = switch_drops(session, sw) if metron_rule_count(session, sw) else 0
        log(f"submitting {name}: firewall with {n_rules} rules -> NAPT -> LB over REST ...")
        chain, plan, t_submit, out.submit_ms = deploy(session, name, n_rules)
        log(f"  {chain['name']} {chain['state']} after {out.submit_ms:.0f} ms")
        time.sleep(1.0)
        flow_list = traffic.flows(plan, allowed, denied)
        pcap = work / "traffic.pcap"
        n = traffic.write_pcap(pcap, flow_list, packets_per_flow)
        log(f"replaying {n} packets ({allowed} allowed + {denied} denied flows) from src ...")
        out.sent = traffic.replay(session.netns("src"), pcap) or n
        time.sleep(1.0)
    finally:
        if probe:
            probe.stop()
        packets = capture.stop()
    arrivals = traffic.analyze(packets)
    first = traffic.first_probe_after(arrivals, t_submit)
    out.submit_to_traffic_ms = None if first is None else (first - t_submit) / 1e6
    ok, lines = traffic.check(arrivals, flow_list)
    denied_sent = sum(1 for f in flow_list if f.kind == "deny") * packets_per_flow
    dropped = switch_drops(session, sw) - drops_before
    fw_on_switch = dropped >= denied_sent
    ok &= fw_on_switch
    lines.append(f"firewall ran on the switch  OVS drop-rule counters +{dropped} for {denied_sent} denied packets"
                 + ("" if fw_on_switch else "  TOO FEW"))
    core_ok, core_lines = per_core(session, name)
    ok &= core_ok
    lines += core_lines
    lines.append(f"offload rules on {sw:<10} {metron_rule_count(session, sw)}")
    out.ok, out.lines = ok and out.submit_to_traffic_ms is not None, lines
    lines.append("submit -> traffic flowing " + (f"{out.submit_to_traffic_ms:.0f} ms" if out.submit_to_traffic_ms
                                                 is not None else "NEVER (no probe reached the sink)"))
    return out


def per_core(session, chain_name):
    """Each of the chain's groups was processed by its own core only (agent counters)."""
    placement = [p for p in session.host.call("GET", "/placements")["placements"] if p["chain"] == chain_name]
    if not placement:
        return False, ["per-core processing       NO PLACEMENT"]
    server = placement[0]["server"].split(":", 1)[1]
    stats = session.agent_stats(server)
    own = {g["id"]: g["core"] for g in placement[0].get("groups", [])}
    lines, ok = [], True
    groups = [g for g in stats.get("groups", []) if g["pipelineId"] == chain_name]
    cores_used = set(own.values())
    for g in groups:
        right = own.get(g["groupId"]) == g["core"] and int(g["packets"]) > 0
        ok &= right
        lines.append(f"group {g['groupId']} on core {g['core']}         {g['packets']} packets, classes "
                     + ", ".join(f"{c['classId']}:{c['packets']}" for c in g.get("classes", []))
                     + ("" if right else f"  EXPECTED core {own.get(g['groupId'])} with traffic"))
    for c in stats.get("cores", []):
        if c["core"] not in cores_used and int(c.get("rxPackets", 0)) > 0 and not any(
                g["core"] == c["core"] for g in stats.get("groups", []) if g["pipelineId"] != chain_name):
            ok = False
            lines.append(f"core {c['core']} received {c['rxPackets']} packets but runs no group of {chain_name}")
    ok &= bool(groups)
    if not groups:
        lines.append(f"per-core processing       agent reports no group of {chain_name}")
    return ok, lines
