#!/usr/bin/python3
"""Benchmark inputs for the agent: pcap traces (scapy) and IPFilter rule sets.

  gen_traffic.py rules N OUT            N random IPFilter rules (the firewall of the FW->NAPT->LB chain)
  gen_traffic.py pcap FRAMES FLOWS OUT  FRAMES 64-byte UDP/TCP frames cycling over FLOWS distinct 5-tuples,
                                        tagged for group 1 (dst MAC 02:4d:00:01:00:00)
  gen_traffic.py rules6 N OUT           the same rule shapes over IPv6 prefixes (2001:db8:A:B::/64 sources)
  gen_traffic.py pcap6 FRAMES FLOWS OUT 62-byte IPv6/UDP frames (the smallest IPv6 UDP frame) over FLOWS flows
  gen_traffic.py split IN OUT0 OUT1     IN's IPv4 frames in two traces by a hash of their 5-tuple (every flow in
                                        one of them, as RSS spreads flows over two queues)
  gen_traffic.py chain RULES CAPACITY OUT
                                        the FW(RULES)->NAPT->LB chain as an operator submits it (chain JSON: the
                                        same three NFs as the benches' Click configurations, common.sh), NAPT's
                                        flow table sized CAPACITY

Addresses are drawn from the same pools as the rules so that rules match realistically; a fixed seed makes
every run use the same inputs.
"""
import json
import random
import struct
import sys
import zlib

from scapy.all import Ether, IP, IPv6, TCP, UDP, Raw, wrpcap  # noqa: E402

SEED = 4242
NETS = [f"10.{a}.0.0" for a in range(0, 64)]


def _rules(n, out, src_net, dst_net):
    """n-1 random deny/allow rules over src_net(a, b) / dst_net(b) prefixes, then allow all (same draws per family)."""
    rnd = random.Random(SEED)
    lines = []
    for _ in range(n - 1):
        a = rnd.randrange(64)
        parts = [f"src net {src_net(a, rnd.randrange(256))}"]
        if rnd.random() < 0.5:
            parts.append(f"dst net {dst_net(rnd.randrange(256))}")
        if rnd.random() < 0.6:
            parts.insert(0, rnd.choice(["tcp", "udp"]))
            parts.append(f"dst port {rnd.choice([22, 23, 25, 53, 80, 443, 8080, rnd.randrange(1024, 65535)])}")
        lines.append(f"{rnd.choice(['deny', 'deny', 'allow'])} {' && '.join(parts)}")
    lines.append("allow all")
    with open(out, "w") as f:
        f.write(",\n".join(lines) + "\n")


def rules(n, out):
    _rules(n, out, lambda a, b: f"10.{a}.{b}.0/24", lambda b: f"192.168.{b}.0/24")


def rules6(n, out):
    """rules() with each IPv4 /24 replaced by an IPv6 /64 from the pools pcap6() draws from."""
    _rules(n, out, lambda a, b: f"2001:db8:{a:x}:{b:x}::/64", lambda b: f"2001:db8:ff:{b:x}::/64")


def _write_pcap(out, cache, frames):
    with open(out, "wb") as w:
        w.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i in range(frames):
            f = cache[i % len(cache)]
            w.write(struct.pack("<IIII", i // 1000000, i % 1000000, len(f), len(f)))
            w.write(f)


def pcap6(frames, flows, out):
    rnd = random.Random(SEED + flows + 6)
    template = bytes(Ether(src="02:00:00:00:00:01", dst="02:4d:00:01:00:00") /
                     IPv6(src="2001:db8::1", dst="2001:db8::2", hlim=64) / UDP(sport=1, dport=1))
    cache = []
    for _ in range(flows):
        src = bytes([0x20, 0x01, 0x0d, 0xb8, 0, rnd.randrange(64), 0, rnd.randrange(256)]) + rnd.randbytes(8)
        dst = bytes([0x20, 0x01, 0x0d, 0xb8, 0, 0xff, 0, rnd.randrange(256)]) + rnd.randbytes(8)
        sport, dport = rnd.randrange(1024, 65535), rnd.choice([53, 80, 443, 8080])
        f = bytearray(template)
        ip, l4 = 14, 54
        f[ip + 8:ip + 24], f[ip + 24:ip + 40] = src, dst
        f[l4:l4 + 4] = struct.pack("!HH", sport, dport)
        f[l4 + 6:l4 + 8] = b"\x00\x00"
        pseudo = src + dst + struct.pack("!IxxxB", 8, 17)
        c = _csum(pseudo + bytes(f[l4:l4 + 8]))
        f[l4 + 6:l4 + 8] = struct.pack("!H", c or 0xFFFF)
        cache.append(bytes(f))
    for raw_frame in cache[:4]:
        again = Ether(raw_frame)
        del again[UDP].chksum
        assert bytes(Ether(bytes(again))) == raw_frame, "checksum mismatch in generated IPv6 frame"
    _write_pcap(out, cache, frames)


def split(src, out0, out1):
    with open(src, "rb") as r:
        header, data = r.read(24), r.read()
    outs = [bytearray(header), bytearray(header)]
    at = 0
    while at + 16 <= len(data):
        n = struct.unpack("<IIII", data[at:at + 16])[2]
        rec = data[at:at + 16 + n]
        frame = rec[16:]
        ip = 14
        ihl = (frame[ip] & 15) * 4
        key = frame[ip + 9:ip + 10] + frame[ip + 12:ip + 20] + frame[ip + ihl:ip + ihl + 4]
        outs[zlib.crc32(key) & 1] += rec
        at += 16 + n
    for out, buf in zip((out0, out1), outs):
        with open(out, "wb") as w:
            w.write(buf)


def _csum(data):
    if len(data) % 2:
        data += b"\x00"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def pcap(frames, flows, out):
    """Scapy builds one template frame per protocol; per-flow frames patch addresses/ports and recompute the
    checksums (building 100k frames with scapy objects takes minutes on a busy machine)."""
    rnd = random.Random(SEED + flows)
    templates = {}
    for proto, l4 in ((6, TCP(sport=1, dport=1, flags="A")), (17, UDP(sport=1, dport=1))):
        p = Ether(src="02:00:00:00:00:01", dst="02:4d:00:01:00:00") / IP(src="1.1.1.1", dst="2.2.2.2", ttl=64) / l4
        p = p / Raw(b"\x00" * max(0, 60 - len(p)))
        templates[proto] = bytes(p)
    cache = []
    for _ in range(flows):
        src = bytes([10, rnd.randrange(64), rnd.randrange(256), rnd.randrange(1, 255)])
        dst = bytes([192, 168, rnd.randrange(256), rnd.randrange(1, 255)])
        sport, dport, proto = rnd.randrange(1024, 65535), rnd.choice([53, 80, 443, 8080]), rnd.choice([6, 17])
        f = bytearray(templates[proto])
        ip = 14
        f[ip + 12:ip + 16], f[ip + 16:ip + 20] = src, dst
        f[ip + 10:ip + 12] = b"\x00\x00"
        f[ip + 10:ip + 12] = struct.pack("!H", _csum(bytes(f[ip:ip + 20])))
        l4 = ip + 20
        tot = struct.unpack("!H", f[ip + 2:ip + 4])[0]
        f[l4:l4 + 4] = struct.pack("!HH", sport, dport)
        off = l4 + (16 if proto == 6 else 6)
        f[off:off + 2] = b"\x00\x00"
        pseudo = src + dst + struct.pack("!BBH", 0, proto, tot - 20)
        c = _csum(pseudo + bytes(f[l4:ip + tot]))
        f[off:off + 2] = struct.pack("!H", c if c or proto == 6 else 0xFFFF)
        cache.append(bytes(f))
    # The checksums we computed must agree with scapy's own.
    for raw_frame in cache[:4]:
        chk = Ether(raw_frame)
        again = Ether(raw_frame)
        del again[IP].chksum
        del again[IP].payload.chksum
        assert bytes(Ether(bytes(again))) == bytes(chk), "checksum mismatch in generated frame"
    _write_pcap(out, cache, frames)


def chain(rules_file, capacity, out):
    """The benches' FW->NAPT->LB as a chain for the synthesizer (the schema of docs/examples/*.json): IPFilter on
    RULES, NAPT to 5.5.5.5, a Maglev balancer over 10.0.0.10-13:80 that decrements the TTL (common.sh's LB)."""
    with open(rules_file) as f:
        rules = " ".join(f.read().split("\n")).strip().rstrip(",")
    lb = ", ".join(f"- - 10.0.0.{10 + i} 80 0 0" for i in range(4))
    nf = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> {} -> Unstrip(14) -> ToDevice(out0);"
    doc = {
        "name": "fw_napt_lb",
        "nfs": [
            {"name": "fw", "click": nf.format(f"fw :: IPFilter({rules})")},
            {"name": "napt", "click": nf.format(
                f"rw :: IPRewriter(pattern 5.5.5.5 1024-65535 - - 0 0, drop, CAPACITY {capacity})")},
            {"name": "lb", "click": f"mg :: MaglevIPMapper({lb});\n"
                                    + nf.format("lb :: IPRewriter(mg, drop) -> DecIPTTL")},
        ],
        "links": [{"from": "fw.out0", "to": "napt.in0"}, {"from": "napt.out0", "to": "lb.in0"}],
        "ingress": ["fw.in0"],
        "egress": ["lb.out0"],
        "deployment": {"tagType": "mac", "cpuCores": 1, "maxCpuCores": 2, "autoScale": False, "nics": 1},
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    if sys.argv[1] == "rules":
        rules(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "pcap":
        pcap(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "rules6":
        rules6(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "pcap6":
        pcap6(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "split":
        split(sys.argv[2], sys.argv[3], sys.argv[4])
    elif sys.argv[1] == "chain":
        chain(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        sys.exit(__doc__)
