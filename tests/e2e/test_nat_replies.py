"""NAT replies through a real agent: the synthesizer's reply group config (one SynthRewriter, forward classes at
input 0, reply classes at input 1) runs in metron-agent (standalone, pcap vdev) on real packets. Forward flows
are rewritten and their replies, entering later through the reply class, are restored by the same flow table;
replies to ports (or from backends) no flow was given are dropped. Chains: a NAPT alone, and the corpus's NAPT
then round-robin LB (one composed mapping per flow). The frames carry the class tags the P4 tagging switch would
write (the compiled reply rules are checked to send the reply class), and each egress k is marked in the dst MAC
the way the agent marks egresses."""
import json
import os
import subprocess
from pathlib import Path

import pytest
from scapy.all import IP, TCP, UDP, Ether, rdpcap, wrpcap

REPO = Path(__file__).resolve().parents[2]
AGENT = REPO / "agent" / "build" / "metron-agent"
SYNTH = REPO / "synthesizer" / "bin" / "metron-synth"
JARS = list((REPO / "synthesizer" / "target").glob("metron-synthesizer-*.jar"))

pytestmark = [
    pytest.mark.skipif(not AGENT.exists(), reason="agent not built (make build)"),
    pytest.mark.skipif(not JARS, reason="synthesizer not built (make build)"),
]

NAT = ("FromDevice(in0) -> Strip(14) -> CheckIPHeader\n"
       "  -> rw :: IPRewriter(pattern 203.0.113.1 1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);\n"
       "FromDevice(in1) -> Strip(14) -> CheckIPHeader -> [1]rw[1] -> Unstrip(14) -> ToDevice(out1);\n")
PUBLIC = "203.0.113.1"
SERVER = "198.51.100.7"
FLOWS = 40          # forward flows, from 10.0.0.1:2000.. to SERVER:80 (TCP) and SERVER:53 (UDP), alternating
FILLER = 64         # frames of an unrelated class between forward and replies: the rx bursts apart (pcap: 32)
GROUP = 1           # any group tag: group configs only read the class bits


def tag(class_id):
    return "02:4d:00:%02x:%02x:%02x" % (GROUP, class_id >> 8, class_id & 0xff)


def egress_mark(k):
    return "02:00:00:00:00:%02x" % k


def synthesize(tmp_path, chain):
    (tmp_path / "chain.json").write_text(json.dumps(chain))
    out = tmp_path / "synth"
    subprocess.run([str(SYNTH), str(tmp_path / "chain.json"), "--target", "P4_TAGGER", "-o", str(out)],
                   check=True, capture_output=True, text=True, timeout=120)
    classes = json.loads((out / "classes.json").read_text())
    rules = json.loads((out / "rules.json").read_text())
    return out, classes, rules


def class_of(classes, prefix):
    found = [c for c in classes["classes"] if c["operations"].startswith(prefix)]
    assert len(found) == 1, [c["operations"] for c in classes["classes"]]
    return found[0]["id"]


def run_agent(tmp_path, group_click, frames):
    """Runs the group config in a standalone agent over the frames; returns the frames sent to egress 0 and 1."""
    (tmp_path / "agent.click").write_text(standalone(group_click))
    wrpcap(str(tmp_path / "in.pcap"), frames)
    prefix = "natr%d" % os.getpid()
    cmd = [str(AGENT), "--idle-exit", "500", "--dpdk", "-l", "0", "--no-huge", "-m", "256", "--no-pci",
           "--log-level", "lib.eal:error", "--file-prefix", prefix,
           "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (tmp_path / "in.pcap", tmp_path / "out.pcap"),
           "--", str(tmp_path / "agent.click")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    sent = rdpcap(str(tmp_path / "out.pcap"))
    return ([f for f in sent if f[Ether].dst == egress_mark(0)], [f for f in sent if f[Ether].dst == egress_mark(1)],
            run.stdout)


def reply_group(out, classes, rules, fwd):
    """The config of the group holding forward class fwd and the one reply class answered by its rewriter."""
    op = [c for c in classes["classes"] if c["id"] == fwd][0]["statefulKey"]
    rep = class_of(classes, "reply: restore by input 1 of the SynthRewriter of '%s'" % op)
    assert any(r["action"].get("classId") == rep for r in rules.get("replyRules", [])), rules
    group = [g for g in classes["groups"] if fwd in g["classIds"]]
    assert len(group) == 1 and rep in group[0]["classIds"], classes["groups"]
    click = (out / ("group-%d.click" % group[0]["id"])).read_text()
    assert "-> [1]rw;" in click, click
    return rep, click


def standalone(group_click):
    """The group config as a standalone agent config: one pcap port in, egress k marked in the dst MAC."""
    body = group_click.replace("input ->", "FromDevice(net_pcap0) ->")
    for k in range(2):
        body = body.replace("[%d]output" % k, "out%d" % k)
    decls = "tx :: ToDevice(net_pcap0);\n" + "".join(
        "out%d :: StoreEtherAddress(%s, dst) -> tx;\n" % (k, egress_mark(k)) for k in range(2))
    return decls + body


def test_replies_are_restored_by_the_forward_flow_table_in_the_agent(tmp_path):
    chain = {"name": "natr", "nfs": [{"name": "nat", "click": NAT}], "links": [],
             "ingress": ["nat.in0", "nat.in1"], "egress": ["nat.out0", "nat.out1"]}
    out, classes, rules = synthesize(tmp_path, chain)
    fwd = class_of(classes, "SynthRewriter(")
    rep, click = reply_group(out, classes, rules, fwd)

    frames = []
    inside = []
    for i in range(FLOWS):
        l4 = TCP(sport=2000 + i, dport=80, flags="S") if i % 2 == 0 else UDP(sport=2000 + i, dport=53)
        inside.append(("10.0.0.%d" % (1 + i % 5), 2000 + i))
        frames.append(Ether(src="02:00:00:00:01:01", dst=tag(fwd)) / IP(src=inside[-1][0], dst=SERVER, ttl=64) / l4)
    # more new flows of the same class between forward packets and replies: the rx bursts apart (pcap: 32)
    for i in range(FILLER):
        frames.append(Ether(src="02:00:00:00:01:01", dst=tag(fwd)) / IP(src="10.9.9.9", dst=SERVER) /
                      UDP(sport=30000 + i, dport=9))
    # replies from the server to the first ports of the range, TCP and UDP: FLOWS of them have a mapping
    replies = 0
    for p in range(1024, 1024 + FLOWS + FILLER + 10):
        for l4 in (TCP(sport=80, dport=p, flags="SA"), UDP(sport=53, dport=p)):
            frames.append(Ether(src="02:00:00:00:02:02", dst=tag(rep)) / IP(src=SERVER, dst=PUBLIC, ttl=60) / l4)
            replies += 1
    forward, back, log = run_agent(tmp_path, click, frames)

    assert len(forward) == FLOWS + FILLER, log
    # every forward flow leaves from the NAT address with its own port; remember which inside host:port got it
    given = {}
    for f, (host, port) in zip(forward, inside):
        assert f[IP].src == PUBLIC and f[IP].dst == SERVER
        l4 = f[TCP] if TCP in f else f[UDP]
        assert 1024 <= l4.sport <= 65535
        given[(TCP in f, l4.sport)] = (host, port)
    assert len(given) == FLOWS
    # replies: exactly those to a given port of the same protocol come back, restored to the inside flow
    assert 0 < len(back) < replies
    restored = set()
    for f in back:
        l4 = f[TCP] if TCP in f else f[UDP]
        assert f[IP].src == SERVER and l4.sport == (80 if TCP in f else 53)
        restored.add((f[IP].dst, l4.dport))
        assert (f[IP].dst, l4.dport) in given.values(), f.summary()
    assert restored == set(given.values()), (sorted(restored), sorted(given.values()))


def test_replies_through_napt_and_lb_undo_the_composed_rewrite_in_the_agent(tmp_path):
    """NAPT then round-robin LB, both directions (the corpus chain's NFs): one SynthRewriter holds the composed
    mapping; a backend's reply to the NAT address and port of its flow comes back as the virtual service's."""
    corpus = json.loads((REPO / "synthesizer" / "corpus" / "fw500-napt-lb-replies.json").read_text())
    nfs = [nf for nf in corpus["nfs"] if nf["name"] in ("napt", "lb")]
    chain = {"name": "naptlb", "nfs": nfs,
             "links": [{"from": "napt.out0", "to": "lb.in0"}, {"from": "lb.out1", "to": "napt.in1"}],
             "ingress": ["napt.in0", "lb.in1"], "egress": ["lb.out0", "napt.out1"]}
    out, classes, rules = synthesize(tmp_path, chain)
    fwd = class_of(classes, "SynthRewriter(PATTERN 203.0.113.1 1024-65535 10.10.0.1 8080")
    rep, click = reply_group(out, classes, rules, fwd)
    backends = ["10.10.0.1", "10.10.0.2", "10.10.0.3"]

    # FLOWS + FILLER new flows (the replies then arrive in later rx bursts), all to the virtual service
    frames = []
    inside = []
    for i in range(FLOWS + FILLER):
        inside.append(("10.0.%d.%d" % (i // 50, 1 + i % 50), 2000 + i))
        frames.append(Ether(src="02:00:00:00:01:01", dst=tag(fwd)) / IP(src=inside[-1][0], dst=SERVER) /
                      TCP(sport=2000 + i, dport=80, flags="S"))
    replies = 0
    for p in range(1024, 1024 + FLOWS + FILLER + 10):
        for b in backends:
            frames.append(Ether(src="02:00:00:00:02:02", dst=tag(rep)) / IP(src=b, dst=PUBLIC) /
                          TCP(sport=8080, dport=p, flags="SA"))
            replies += 1
    forward, back, log = run_agent(tmp_path, click, frames)

    assert len(forward) == FLOWS + FILLER, log
    given = {}
    for f, flow in zip(forward, inside):
        assert f[IP].src == PUBLIC and f[IP].dst in backends and f[TCP].dport == 8080, f.summary()
        given[(f[IP].dst, f[TCP].sport)] = flow
    assert len(given) == FLOWS + FILLER
    assert len({f[IP].dst for f in forward}) == 3, "round robin over the three backends"
    assert 0 < len(back) < replies
    restored = set()
    for f in back:
        # the client sees the virtual service, not the backend
        assert f[IP].src == SERVER and f[TCP].sport == 80, f.summary()
        restored.add((f[IP].dst, f[TCP].dport))
    assert restored == set(given.values()), (sorted(restored), sorted(given.values()))
    # one of the three backends' replies per flow: the one its flow was sent to
    assert len(back) == FLOWS + FILLER
