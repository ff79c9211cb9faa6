"""NAT replies through a real agent: the synthesizer's reply group config (one SynthRewriter, forward classes at
input 0, reply classes at input 1) runs in metron-agent (standalone, pcap vdevs) on real packets. Forward flows
are rewritten and their replies, entering later through the reply class, are restored by the same flow table;
replies to ports no flow was given are dropped. The frames carry the class tags the P4 tagging switch would
write (the compiled rules are checked to say so), and each egress k is marked the way the agent marks it."""
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


def synthesize(tmp_path):
    chain = {"name": "natr", "nfs": [{"name": "nat", "click": NAT}], "links": [],
             "ingress": ["nat.in0", "nat.in1"], "egress": ["nat.out0", "nat.out1"]}
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


def standalone(group_click):
    """The group config as a standalone agent config: one pcap port in, egress k marked in the dst MAC."""
    body = group_click.replace("input ->", "FromDevice(net_pcap0) ->")
    for k in range(2):
        body = body.replace("[%d]output" % k, "out%d" % k)
    decls = "tx :: ToDevice(net_pcap0);\n" + "".join(
        "out%d :: StoreEtherAddress(%s, dst) -> tx;\n" % (k, egress_mark(k)) for k in range(2))
    return decls + body


def test_replies_are_restored_by_the_forward_flow_table_in_the_agent(tmp_path):
    out, classes, rules = synthesize(tmp_path)
    fwd = class_of(classes, "SynthRewriter(")
    rep = class_of(classes, "reply: restore")
    # the tagging switch sends TCP/UDP replies to the NAT address's allocated ports to the reply class
    assert any(r["action"].get("classId") == rep for r in rules.get("replyRules", [])), rules
    group = [g for g in classes["groups"] if fwd in g["classIds"]]
    assert len(group) == 1 and rep in group[0]["classIds"], classes["groups"]
    click = (out / ("group-%d.click" % group[0]["id"])).read_text()
    assert "-> [1]rw;" in click, click
    (tmp_path / "agent.click").write_text(standalone(click))

    frames = []
    inside = []
    for i in range(FLOWS):
        l4 = TCP(sport=2000 + i, dport=80, flags="S") if i % 2 == 0 else UDP(sport=2000 + i, dport=53)
        inside.append(("10.0.0.%d" % (1 + i % 5), 2000 + i))
        frames.append(Ether(src="02:00:00:00:01:01", dst=tag(fwd)) / IP(src=inside[-1][0], dst=SERVER, ttl=64) / l4)
    # an unrelated class tag: the group's classifier sends it to its forward path, where it is a new flow too
    for i in range(FILLER):
        frames.append(Ether(src="02:00:00:00:01:01", dst=tag(fwd)) / IP(src="10.9.9.9", dst=SERVER) /
                      UDP(sport=30000 + i, dport=9))
    # replies from the server to the first FLOWS + 10 ports of the range: FLOWS of them have a mapping
    replies = 0
    for p in range(1024, 1024 + FLOWS + FILLER + 10):
        for l4 in (TCP(sport=80, dport=p, flags="SA"), UDP(sport=53, dport=p)):
            frames.append(Ether(src="02:00:00:00:02:02", dst=tag(rep)) / IP(src=SERVER, dst=PUBLIC, ttl=60) / l4)
            replies += 1
    wrpcap(str(tmp_path / "in.pcap"), frames)

    prefix = "natr%d" % os.getpid()
    cmd = [str(AGENT), "--idle-exit", "500", "--dpdk", "-l", "0", "--no-huge", "-m", "256", "--no-pci",
           "--log-level", "lib.eal:error", "--file-prefix", prefix,
           "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (tmp_path / "in.pcap", tmp_path / "out.pcap"),
           "--", str(tmp_path / "agent.click")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr

    sent = rdpcap(str(tmp_path / "out.pcap"))
    forward = [f for f in sent if f[Ether].dst == egress_mark(0)]
    back = [f for f in sent if f[Ether].dst == egress_mark(1)]
    assert len(forward) == FLOWS + FILLER, run.stdout
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
