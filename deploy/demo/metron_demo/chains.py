"""The demo's service chain: a firewall with N rules, then a NAPT, then a round-robin load balancer, written as
plain Click NFs in the chain JSON of docs/contracts.md (the synthesizer turns them into switch rules and one
stateful group per traffic class group)."""
import json
from dataclasses import dataclass

NAPT_ADDRESS = "192.0.2.1"
BACKENDS = ("10.0.2.1", "10.0.2.2", "10.0.2.3")
BACKEND_PORT = 8080
SERVICE_PORT = 5000


@dataclass(frozen=True)
class FirewallPlan:
    """What the firewall decides, so traffic can be generated on both sides of it."""
    denied_sources: tuple  # explicit deny rules
    allowed_port: int      # udp to this port is allowed from any other source; everything else is denied


def firewall(n_rules, proto="udp"):
    if n_rules < 2:
        raise ValueError(f"a firewall needs at least 2 rules (deny..., allow), got {n_rules}")
    denied = tuple(f"10.1.{i // 250}.{i % 250 + 1}" for i in range(n_rules - 1))
    rules = [f"deny src host {ip}" for ip in denied] + [f"allow {proto} dst port {SERVICE_PORT}", "deny all"]
    click = ("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> fw :: IPFilter(" + ", ".join(rules)
             + ") -> Unstrip(14) -> ToDevice(out0);")
    return click, FirewallPlan(denied, SERVICE_PORT)


def napt():
    return ("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: IPRewriter(pattern "
            f"{NAPT_ADDRESS} 1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);")


def load_balancer():
    mappings = ", ".join(f"- - {b} {BACKEND_PORT} 0 1" for b in BACKENDS)
    return (f"rr :: RoundRobinIPMapper({mappings});\n"
            "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> lb :: IPRewriter(rr, drop) -> Unstrip(14) "
            "-> ToDevice(out0);")


def fw_napt_lb(name, n_rules, ingress, egress, cores=1, max_cores=2):
    """Chain JSON (a string) and the firewall plan behind it."""
    fw, plan = firewall(n_rules)
    chain = {
        "name": name,
        "nfs": [{"name": "fw", "click": fw}, {"name": "napt", "click": napt()},
                {"name": "lb", "click": load_balancer()}],
        "links": [{"from": "fw.out0", "to": "napt.in0"}, {"from": "napt.out0", "to": "lb.in0"}],
        "ingress": ["fw.in0"],
        "egress": ["lb.out0"],
        "deployment": {"tagType": "mac", "cpuCores": cores, "maxCpuCores": max_cores, "autoScale": False,
                       "ingressPoint": ingress, "egressPoint": egress, "nics": 1},
    }
    return json.dumps(chain), plan


# Replies (docs/contracts.md: a chain's second ingress entry is its reply ingress). Each NF gets a reply path
# in1 -> out1: the firewall passes replies, the NAPT and the LB restore them through input 1 of their rewriters
# (a reply without a mapping is dropped).
FIREWALL_REPLIES = "FromDevice(in1) -> ToDevice(out1);"


def _with_reply_input(click, element):
    return click + (f"\nFromDevice(in1) -> Strip(14) -> CheckIPHeader -> [1]{element}[1] -> Unstrip(14) "
                    "-> ToDevice(out1);")


def fw_napt_lb_replies(name, n_rules, ingress, egress, cores=1, max_cores=2, proto="tcp"):
    """FW(n_rules, allowing `proto` to SERVICE_PORT) -> NAPT -> LB with replies: they enter at the egress
    point (the LB's backends answer 192.0.2.1) and leave toward the ingress point restored to the virtual
    service address. Chain JSON (a string) and the firewall plan behind it."""
    fw, plan = firewall(n_rules, proto)
    chain = {
        "name": name,
        "nfs": [{"name": "fw", "click": fw + "\n" + FIREWALL_REPLIES},
                {"name": "napt", "click": _with_reply_input(napt(), "rw")},
                {"name": "lb", "click": _with_reply_input(load_balancer(), "lb")}],
        "links": [{"from": "fw.out0", "to": "napt.in0"}, {"from": "napt.out0", "to": "lb.in0"},
                  {"from": "lb.out1", "to": "napt.in1"}, {"from": "napt.out1", "to": "fw.in1"}],
        "ingress": ["fw.in0", "lb.in1"],
        "egress": ["lb.out0", "fw.out1"],
        "deployment": {"tagType": "mac", "cpuCores": cores, "maxCpuCores": max_cores, "autoScale": False,
                       "ingressPoint": ingress, "egressPoint": egress, "nics": 1},
    }
    return json.dumps(chain), plan
