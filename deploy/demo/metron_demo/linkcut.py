"""Packets lost across a link cut (issue 23 item 3): one UDP flow through the chain at a steady rate, sequence
numbers in the payload, the link cut while it runs; what the sink missed is the loss. Used by
tests/e2e/test_fast_failover_e2e.py and deploy/demo/bench.py."""
import threading
import time
from pathlib import Path

from . import chains, traffic
from .session import launcher  # session.py puts topologies/ (metron_topo) on the path


def frames(count, flow_id=1, sport=23000):
    """`count` frames of one allowed UDP flow, seq 0..count-1 in the payload (traffic.PAYLOAD's format)."""
    from scapy.all import IP, UDP, Ether, Raw
    return [Ether(src=traffic.SRC_MAC, dst=traffic.SINK_MAC) / IP(src=traffic.SRC_IP, dst=traffic.SINK_IP)
            / UDP(sport=sport, dport=chains.SERVICE_PORT) / Raw(b"metron-allow-%d-%d" % (flow_id, k))
            for k in range(count)]


def arrived_seqs(packets, flow_id=1):
    out = set()
    for p in packets:
        from scapy.all import Raw
        if Raw in p:
            load = bytes(p[Raw].load)
            m = traffic.PAYLOAD.search(load)
            seq = load.rsplit(b"-", 1)[-1]
            if m and int(m.group(2)) == flow_id and seq.isdigit():
                out.add(int(seq))
    return out


def gaps(seqs, total):
    """Missing sequence numbers below `total` as ranges (a, b)."""
    out, k = [], 0
    while k < total:
        if k in seqs:
            k += 1
            continue
        j = k
        while j + 1 < total and j + 1 not in seqs:
            j += 1
        out.append((k, j))
        k = j + 1
    return out


def cut_while_sending(session, switch, port, pps, seconds, cut_after_s, name, probe=None):
    """Sends `pps` x `seconds` frames and cuts `switch`:`port` (launcher.set_port: the veth's link down on the
    kernel network, OFPPC_PORT_DOWN on the fast one) `cut_after_s` into it. Answers a dict: sent, lost, lost_ms
    (lost / pps), gaps (missing seq ranges), cut_seq (about the seq sent at the cut) and, with `probe`, what it
    answered once the last frame was sent (before the capture is read, which takes seconds)."""
    total = int(pps * seconds)
    run_dir = Path(session.state["run_dir"])
    from scapy.all import wrpcap
    pcap = run_dir / f"{name}-sent.pcap"
    wrpcap(str(pcap), frames(total))
    cap = traffic.Capture(session.netns("sink"), run_dir / f"{name}.pcap")
    sent = {}
    sender = threading.Thread(target=lambda: sent.setdefault("n", traffic.replay(session.netns("src"), pcap, pps=pps)))
    try:
        t0 = time.monotonic()
        sender.start()
        time.sleep(cut_after_s)
        cut_at = time.monotonic() - t0
        launcher.set_port(session.state, switch, port, up=False)
        sender.join()
        probed = probe() if probe else None
        time.sleep(0.5)
    finally:
        arrived = arrived_seqs(cap.stop())
    missing = gaps(arrived, total)
    lost = sum(b - a + 1 for a, b in missing)
    return {"sent": sent.get("n", total), "lost": lost, "lost_ms": lost * 1000.0 / pps, "gaps": missing,
            "cut_seq": int(cut_at * pps), "probe": probed}
