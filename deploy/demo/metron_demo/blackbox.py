"""The black-box chain of the end-to-end and Karaf tests (issue 24, docs/blackbox.md) and the traffic that tells its
NF's verdicts: FW -> ids -> NAPT -> LB whose `ids` is a separate process, the project's minimal NF (metron-nf-fwd, a
DPDK secondary of the agent fed over zero-copy rings), which passes UDP to PASS_PORT and drops UDP to DROP_PORT (its
--drop-port); a sender of one frame a millisecond per port from the source host, each frame carrying its port and
send time, and the analysis of what reached the sink."""
import json
import subprocess
import time

from . import chains, traffic

PASS_PORT = chains.SERVICE_PORT  # 5000: the NF passes it
DROP_PORT = PASS_PORT + 1        # 5001: the NF drops it


def chain_json(name, program, on_failure, ingress, egress):
    """Chain JSON (a string): the firewall lets UDP to both ports through (except from 10.1.0.1), the box decides."""
    fw = ("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> fw :: IPFilter(deny src host 10.1.0.1, "
          f"allow udp dst port {PASS_PORT}, allow udp dst port {DROP_PORT}, deny all) -> Unstrip(14) -> ToDevice(out0);")
    return json.dumps({
        "name": name,
        "nfs": [{"name": "fw", "click": fw},
                {"name": "ids", "blackbox": {"program": str(program), "args": ["--drop-port", str(DROP_PORT)],
                                             "mode": "ring", "onFailure": on_failure, "mayDrop": True,
                                             "rewrites": [], "flowState": "none"}},
                {"name": "napt", "click": chains.napt()},
                {"name": "lb", "click": chains.load_balancer()}],
        "links": [{"from": "fw.out0", "to": "ids.in0"}, {"from": "ids.out0", "to": "napt.in0"},
                  {"from": "napt.out0", "to": "lb.in0"}],
        "ingress": ["fw.in0"], "egress": ["lb.out0"],
        "deployment": {"tagType": "mac", "cpuCores": 1, "maxCpuCores": 1, "autoScale": False,
                       "ingressPoint": ingress, "egressPoint": egress, "nics": 1}})


class Senders:
    """One frame a millisecond to each port from the source host (raw AF_PACKET socket), each carrying its port and
    send time in its payload: b"bbx-PORT-NS"."""

    def __init__(self, netns, ports):
        script = (
            "import socket, time\n"
            "from scapy.all import Ether, IP, UDP, Raw\n"
            "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW); s.bind(('eth0', 0))\n"
            f"head = Ether(src='{traffic.SRC_MAC}', dst='{traffic.SINK_MAC}') / IP(src='{traffic.SRC_IP}', "
            f"dst='{traffic.SINK_IP}')\n"
            "while True:\n"
            f"    for p in {list(ports)}:\n"
            "        s.send(bytes(head / UDP(sport=40000 + p % 100, dport=p) / Raw(b'bbx-%d-%d' % (p, time.time_ns()))))\n"
            "    time.sleep(0.001)\n")
        self.proc = subprocess.Popen(["ip", "netns", "exec", netns, "/usr/bin/python3", "-c", script],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(1.5)  # scapy import

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def arrivals(packets):
    """Port -> send times (ns) of the frames that reached the sink, and their (src, dst, dport) after the chain."""
    from scapy.all import IP, UDP, Raw
    out = {}
    for p in packets:
        if Raw in p and IP in p and UDP in p and bytes(p[Raw].load).startswith(b"bbx-"):
            _, port, ns = bytes(p[Raw].load).split(b"-")
            out.setdefault(int(port), []).append((int(ns), (p[IP].src, p[IP].dst, p[UDP].dport)))
    return out


def burst(src_netns, sink_netns, pcap, ports=(PASS_PORT,), seconds=0.5):
    """Frames to `ports` for `seconds`, captured at the sink into `pcap`: answers arrivals()."""
    cap = traffic.Capture(sink_netns, pcap)
    senders = Senders(src_netns, list(ports))
    try:
        time.sleep(seconds)
    finally:
        senders.stop()
        got = arrivals(cap.stop())
    return got


def translated(sent):
    """Whether every (src, dst, dport) arrival went through the NAPT and the LB."""
    return all(src == chains.NAPT_ADDRESS and dst in chains.BACKENDS and dport == chains.BACKEND_PORT
               for _, (src, dst, dport) in sent)
