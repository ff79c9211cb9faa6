"""The agent's IPClassifier decides like the synthesizer on the synthesizer's own software classifiers.

For corpus chains the synthesizer writes its group configs and, with --classifier-vectors, seeded packets aimed
at the boundaries of every named IPClassifier/IPFilter in them (the classifying group's `sw`, the reply group's
`swr`) and in the chain's NF configs (the corpus firewalls), each with the output its own element semantics
give. Every such classifier is cut out of its config verbatim
and run in a real standalone agent over a pcap vdev behind the same `Strip(14) -> CheckIPHeader` as in the
group, each output k marking the frame's dst MAC; the frame's src MAC carries the packet's index. Each packet
must come out exactly once at the synthesizer's output, or not at all where it drops. Two implementations of
the pattern language (Java, C++ over rte_acl) that agree on every packet, and every group config of the chain
loads in the agent: the extensions docs/contracts.md lists (IPv6, `ip vers`, `ip firstfrag`, `ip mf`,
relations, `icmp type`, `tcp opt`) are accepted and evaluated alike."""
import csv
import ipaddress
import json
import os
import re
import struct
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AGENT = REPO / "agent" / "build" / "metron-agent"
SYNTH = REPO / "synthesizer" / "bin" / "metron-synth"
JARS = list((REPO / "synthesizer" / "target").glob("metron-synthesizer-*.jar"))
CORPUS = REPO / "synthesizer" / "corpus"

pytestmark = [
    pytest.mark.skipif(not AGENT.exists(), reason="agent not built (make build)"),
    pytest.mark.skipif(not JARS, reason="synthesizer not built (make build)"),
]

PACKETS = 20000
SEED = 7
TAG = bytes.fromhex("024d0001ffff")  # any group tag: the probe does not read it


def synthesize(tmp_path, chain_file, target):
    out = tmp_path / target
    run = subprocess.run([str(SYNTH), str(chain_file), "--target", target, "-o", str(out),
                          "--classifier-vectors", str(PACKETS), "--seed", str(SEED)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    with open(out / "classifier-vectors.tsv") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return out, rows


def declaration(click, name):
    """`NAME :: IPClassifier(...)` (or IPFilter) as written in the group config, and its number of outputs."""
    m = re.search(r"(?<![\w/])%s :: (IPClassifier|IPFilter)\(" % re.escape(name), click)
    assert m, "no IP classifier '%s' in the group config" % name
    depth, i = 1, m.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(click[i], 0)
        i += 1
    args = [a.strip() for a in split_top(click[m.end():i - 1])]
    if m.group(1) == "IPClassifier":
        outputs = len(args)
    else:
        outputs = 1 + max([0] + [int(a.split()[0]) for a in args if a.split()[0].isdigit()])
    return click[m.start():i], outputs


def split_top(text):
    parts, depth, cur = [], 0, ""
    for c in text:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    return parts + [cur]


def mark(k):
    return bytes([2, 0, 0, 0, k >> 8, k & 0xff])


def probe_config(decl, name, outputs):
    lines = ["tx :: ToDevice(net_pcap0);",
             "FromDevice(net_pcap0) -> Strip(14) -> CheckIPHeader -> %s;" % decl]
    for k in range(outputs):
        lines.append("%s[%d] -> Unstrip(14) -> StoreEtherAddress(%s, dst) -> tx;"
                     % (name, k, ":".join("%02x" % b for b in mark(k))))
    return "\n".join(lines) + "\n"


def checksum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s & 0xffff) + (s >> 16)
    s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(i, r):
    """The packet of one vectors row on the wire (the model's fields; absent ones are not on the wire)."""
    v6 = r["family"] == "6"
    proto, ttl, tos = int(r["proto"]), int(r["ttl"]), int(r["tos"])
    first = r["offset"] == "0"
    l4 = bytes(8)
    if first and proto == 6:
        l4 = struct.pack("!HHIIBBHHH", int(r["sport"]), int(r["dport"]), 1, 0, 5 << 4, int(r["tcpflags"]),
                         1024, 0, 0)
    elif first and proto == 17:
        l4 = struct.pack("!HHHH", int(r["sport"]), int(r["dport"]), 8 + 8, 0)
    elif first and proto == (58 if v6 else 1):
        l4 = struct.pack("!BBHI", int(r["icmp"]), 0, 0, 0)
    l4 += b"metron!!"
    src, dst = ipaddress.ip_address(r["src"]).packed, ipaddress.ip_address(r["dst"]).packed
    if v6:
        ip = struct.pack("!IHBB", 6 << 28 | tos << 20, len(l4), proto, ttl) + src + dst
    else:
        frag = (0x2000 if r["mf"] == "1" else 0) | (0 if first else 1)
        hdr = struct.pack("!BBHHHBBH", 0x45, tos, 20 + len(l4), 0, frag, ttl, proto, 0) + src + dst
        ip = hdr[:10] + struct.pack("!H", checksum(hdr)) + hdr[12:]
    eth = TAG + b"\x02\x00" + struct.pack("!I", i) + (b"\x86\xdd" if v6 else b"\x08\x00")
    return eth + ip + l4


def write_pcap(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for fr in frames:
            f.write(struct.pack("<IIII", 0, 0, len(fr), len(fr)) + fr)


def read_pcap(path):
    data = Path(path).read_bytes()
    out, at = [], 24
    while at < len(data):
        _, _, caplen, _ = struct.unpack_from("<IIII", data, at)
        out.append(data[at + 16:at + 16 + caplen])
        at += 16 + caplen
    return out


def run_probe(tmp_path, name, config, pcap):
    (tmp_path / (name + ".click")).write_text(config)
    out = tmp_path / (name + "-out.pcap")
    cmd = [str(AGENT), "--idle-exit", "500", "--dpdk", "-l", "0", "--no-huge", "-m", "512", "--no-pci",
           "--log-level", "lib.eal:error", "--file-prefix", "clsagree%d" % os.getpid(),
           "--vdev", "net_pcap0,rx_pcap=%s,tx_pcap=%s" % (pcap, out), "--", str(tmp_path / (name + ".click"))]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return read_pcap(out)


def describe(r):
    return " ".join("%s=%s" % (k, r[k]) for k in
                    ("family", "src", "dst", "proto", "sport", "dport", "tcpflags", "ttl", "tos", "mf", "offset", "icmp"))


def config_of(out, chain_json, column):
    """The config a vectors column's classifier lives in (`g<k>.E`: group k's, `nf.NF.E`: NF's) and E."""
    if column.startswith("nf."):
        _, nf, name = column.split(".", 2)
        return [n["click"] for n in chain_json["nfs"] if n["name"] == nf][0], name
    group, name = column[1:].split(".", 1)
    return (out / ("group-%s.click" % group)).read_text(), name


def check_chain(tmp_path, chain_file, target, expect_columns):
    chain = chain_file.stem
    chain_json = json.loads(chain_file.read_text())
    out, rows = synthesize(tmp_path, chain_file, target)
    assert len(rows) == PACKETS
    missing = [c for c in expect_columns if c not in rows[0]]
    assert not missing, "no vectors for %s; columns: %s" % (missing, list(rows[0]))
    columns = expect_columns
    pcap = tmp_path / ("%s-%s.pcap" % (chain, target))
    write_pcap(pcap, [frame(i, r) for i, r in enumerate(rows)])
    for group in sorted(out.glob("group-*.click")):  # every group config loads (no IPClassifier is refused)
        body = group.read_text().replace("input ->", "FromDevice(net_pcap0) ->")
        body = re.sub(r"\[\d+\]output", "tx", body)
        run_probe(tmp_path, "load-" + group.stem, "tx :: ToDevice(net_pcap0);\n" + body, pcap)
    for column in columns:
        config, name = config_of(out, chain_json, column)
        decl, outputs = declaration(config, name)
        sent = run_probe(tmp_path, column, probe_config(decl, name, outputs), pcap)
        got = {}
        for fr in sent:
            assert fr[:4] == b"\x02\x00\x00\x00", "a frame left without an output mark: %s" % fr[:14].hex()
            i = struct.unpack("!I", fr[8:12])[0]
            assert i not in got, "packet %d left the agent twice" % i
            got[i] = (fr[4] << 8) | fr[5]
        want = [int(r[column]) for r in rows]
        mismatches = [(i, want[i], got.get(i, -1)) for i in range(len(rows)) if got.get(i, -1) != want[i]]
        patterns = split_top(decl[decl.index("(") + 1:-1])
        assert not mismatches, "%s/%s %s: %d of %d packets differ, e.g.\n%s" % (
            chain, target, column, len(mismatches), len(rows), "\n".join(
                "  %s: synthesizer %d (%s), agent %d (%s)" % (describe(rows[i]), w, pattern(patterns, w), a,
                                                            pattern(patterns, a))
                for i, w, a in mismatches[:5]))
        # Not an agreement by accident: the packets reach many of the classifier's outputs.
        hit = {w for w in want if w >= 0}
        assert len(hit) >= min(outputs, 20), "%s: only outputs %s reached" % (column, sorted(hit))


def pattern(patterns, k):
    return "dropped" if k < 0 else patterns[k].strip()[:160]


# Every extension docs/contracts.md lists, written as users write them (the corpus's group configs use only some:
# CubeText prints `not`/`>= and <=` forms, never `ip mf` alone, `!=`, `<`, `>` or most TCP flags).
EXTENSIONS = """FromDevice(in0) -> Strip(14) -> CheckIPHeader -> ext :: IPClassifier(
    icmp type < 4 or icmp type echo,
    ip vers 6 and icmp type 128,
    icmp type >= 3 and icmp type < 6,
    icmp type != 0 and ip ttl <= 3,
    tcp opt syn and not tcp opt ack and not (tcp opt fin or tcp opt rst),
    tcp opt psh && tcp opt urg,
    ip mf and not ip firstfrag,
    ip mf,
    not ip firstfrag and ip proto != 17,
    src net 2001:db8:4::/48 and (dst port < 1024 or src port > 60000),
    ip vers 6 and dst host 2001:db8::1 || ip proto 47,
    ip proto > 50 and ip proto <= 60 and ! (ip proto 58),
    ip tos >= 184 and ip vers 4,
    ip tos != 0 and ip ttl > 200,
    udp src port != 53 and dst port 53,
    tcp dst port 80-90 and src net 10.0.0.0/8 and not src host 10.1.2.3,
    dst net 2001:db8:8000::/33 or src net 192.168.0.0/16 and ip ttl < 64,
    dst port 22 or 443 or >= 60000,
    src host 10.1.2.3 or 10.1.2.4 or 2001:db8::5,
    src and dst net 10.0.0.0/8,
    ip dscp 46 or ip dscp 61-63,
    ip frag and ip proto 6,
    ip unfrag and udp,
    ip hlim 1-2,
    icmp and ip tos 0x10-0x1f,
    -);
"""


def extensions_chain(tmp_path):
    lines = EXTENSIONS + "".join("ext[%d] -> %sUnstrip(14) -> ToDevice(out%d);\n" % (k, "" if k % 4 else "DecIPTTL -> ",
                                                                                  k % 3) for k in range(26))
    f = tmp_path / "extensions.json"
    f.write_text(json.dumps({"name": "extensions", "nfs": [{"name": "ext", "click": lines}], "links": [],
                             "ingress": ["ext.in0"], "egress": ["ext.out0", "ext.out1", "ext.out2"]}))
    return f


CASES = [  # (chain, target, the IP classifiers to check: group configs' and the NFs' own)
    ("extensions", "NONE", ["g0.sw"]),
    pytest.param("extensions", "NONE", ["nf.ext.ext"], id="extensions-NONE-nf"),
    ("extensions", "OPENFLOW13", ["g0.sw"]),
    ("fw500-napt-lb-replies", "NONE", ["g0.sw", "g0.swr", "nf.fw.fw", "nf.napt.fam", "nf.napt.rfam", "nf.lb.web",
                                       "nf.lb.rweb"]),
    ("fw500-napt-lb-replies", "OPENFLOW13", ["g0.sw"]),
    ("fw1000-napt-lb", "OPENFLOW13", ["g0.sw", "nf.fw.fw"]),
    ("fw1000", "NONE", ["g0.sw", "nf.fw.fw"]),
    ("fw-dpi", "OPENFLOW13", ["g0.sw", "nf.fw.fw"]),
    ("acl-napt", "NONE", ["g0.sw", "nf.acl.acl"]),
    ("router-napt-lb", "OPENFLOW13", ["g0.sw"]),
    ("fw4000", "P4_TAGGER", ["g0.sw", "nf.fw.fw"]),
]


@pytest.mark.parametrize("chain,target,columns", CASES,
                         ids=[None if hasattr(c, "id") else "%s-%s" % c[:2] for c in CASES])
def test_agent_classifies_like_the_synthesizer(tmp_path, chain, target, columns):
    chain_file = extensions_chain(tmp_path) if chain == "extensions" else CORPUS / (chain + ".json")
    check_chain(tmp_path, chain_file, target, columns)
