"""`make demo` on the fast network (topologies/README.md#fast-network: OVS-DPDK on hugepages, vhost-user ports, the
agent on net_virtio_user): the demo chain submitted over REST as on the kernel network, then metron-fastgen sends
1024 allowed UDP flows at a rate the kernel network cannot carry and, in a second step of the same run, the same
flows to a port the firewall denies (one generator for both: a generator that exits takes its switch ports
down). Checked: every allowed frame arrived once, in order, translated (NAPT/LB: addresses no longer those sent),
no flow changed its mapping; no denied frame arrived and the switch's drop rules counted them (the firewall ran
on the switch); each group of the chain ran on its own core (agent counters)."""
import time

from . import chains, scenario, session  # noqa: F401  (session puts topologies/ on the path)
from .scenario import Outcome
from metron_topo import fastgen  # noqa: E402

PPS = 250_000
SECONDS = 3.0
DENIED_PORT = chains.SERVICE_PORT + 1  # only the firewall's final "deny all" matches it


def run(session, name="fw-napt-lb", n_rules=1000, pps=PPS, seconds=SECONDS, log=print):
    """The whole path once on a fast topology; Outcome.ok only when every check passed."""
    out = Outcome(name, n_rules)
    log(f"submitting {name}: firewall with {n_rules} rules -> NAPT -> LB over REST ...")
    chain, plan, _, out.submit_ms = scenario.deploy(session, name, n_rules)
    log(f"  {chain['name']} {chain['state']} after {out.submit_ms:.0f} ms")
    sw = scenario.ingress_switch(session)
    drops_before = scenario.switch_drops(session, sw)
    log(f"metron-fastgen: 1024 flows, {seconds:.0f} s at {pps} pps to udp/{plan.allowed_port} (allowed), then "
        f"{seconds:.0f} s to udp/{DENIED_PORT} (denied) ...")
    t = time.monotonic()
    _, allowed, denied = fastgen.run(session.state, [pps, pps], seconds, dport=plan.allowed_port,
                                     dports=[plan.allowed_port, DENIED_PORT])
    out.sent = allowed["sent"] + denied["sent"]
    deadline = time.monotonic() + 5  # OVS credits a rule's counters from its datapath flows about once a second
    while (dropped := scenario.switch_drops(session, sw) - drops_before) < denied["sent"] \
            and time.monotonic() < deadline:
        time.sleep(0.2)
    lines, ok = [], True
    carried = (allowed["lost"], allowed["duplicates"], allowed["reordered"]) == (0, 0, 0) and not allowed["stalled"]
    ok &= carried
    lines.append(f"allowed frames arrived      {allowed['received']}/{allowed['sent']} at {allowed['achievedPps']:.0f} "
                 f"pps ({pps} asked): lost {allowed['lost']}, duplicated {allowed['duplicates']}, reordered "
                 f"{allowed['reordered']}" + ("" if carried else "  NOT LOSSLESS"))
    translated = allowed["rewritten"] == allowed["received"] > 0 and allowed["remapped"] == 0
    ok &= translated
    lines.append(f"translated (NAPT/LB)        {allowed['rewritten']} of {allowed['received']}, flows remapped "
                 f"{allowed['remapped']}" + ("" if translated else "  WRONG"))
    ok &= denied["received"] == 0
    lines.append(f"denied frames at sink       {denied['received']} of {denied['sent']}")
    fw_on_switch = dropped >= denied["sent"]
    ok &= fw_on_switch
    lines.append(f"firewall ran on the switch  OVS drop-rule counters +{dropped} for {denied['sent']} denied frames"
                 + ("" if fw_on_switch else "  TOO FEW"))
    others = allowed["otherFrames"] + denied["otherFrames"]
    lines.append(f"other frames at sink        {others}")
    core_ok, core_lines = scenario.per_core(session, name)
    ok &= core_ok
    lines += core_lines
    lines.append(f"offload rules on {sw:<10} {scenario.metron_rule_count(session, sw)}")
    lines.append(f"traffic run                 {time.monotonic() - t:.1f} s")
    out.ok, out.lines = ok, lines
    return out
