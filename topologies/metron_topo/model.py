"""Topology files: parsing and validation. The file format is documented in topologies/README.md; this module is
its single reader on the Python side (the embedded host reads the same files in Java for its network view)."""
import ipaddress
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

TOPOLOGY_DIR = Path(__file__).resolve().parent.parent
_NAME = re.compile(r"^[a-z][a-z0-9]{0,5}$")  # short: node names end up inside 15-char interface names
_MAC = re.compile(r"^([0-9a-f]{2}:){5}[0-9a-f]{2}$")
_IFACE = re.compile(r"^[a-z][a-z0-9]{0,7}$")
_KEYS = {"name", "description", "switches", "hosts", "servers", "links", "ingress", "egress"}


class TopologyError(ValueError):
    """A topology file is malformed; the message names the file and the offending entry."""


@dataclass(frozen=True)
class Endpoint:
    node: str
    port: str  # OpenFlow port number (as text) on a switch, interface name on a host or server

    def __str__(self):
        return f"{self.node}:{self.port}"


@dataclass(frozen=True)
class Switch:
    name: str
    dpid: int

    @property
    def device_id(self):
        return f"of:{self.dpid:016x}"


@dataclass(frozen=True)
class Nic:
    name: str
    mac: str


@dataclass(frozen=True)
class Host:
    name: str
    ip: str
    mac: str


@dataclass(frozen=True)
class Server:
    name: str
    cores: int
    nics: tuple


@dataclass(frozen=True)
class Topology:
    name: str
    description: str
    switches: tuple
    hosts: tuple
    servers: tuple
    links: tuple  # of (Endpoint, Endpoint)
    ingress: tuple
    egress: tuple
    source: str = field(default="", compare=False)

    def switch(self, name):
        return next(s for s in self.switches if s.name == name)

    def peer(self, endpoint):
        """The endpoint at the other end of the link attached to `endpoint`, or None."""
        for a, b in self.links:
            if a == endpoint:
                return b
            if b == endpoint:
                return a
        return None


def resolve(name_or_path):
    """A topology by name (topologies/<name>.json) or by path."""
    p = Path(name_or_path)
    if p.suffix == ".json" or p.exists():
        return p
    return TOPOLOGY_DIR / f"{name_or_path}.json"


def load(name_or_path):
    path = resolve(name_or_path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        known = sorted(p.stem for p in TOPOLOGY_DIR.glob("*.json"))
        raise TopologyError(f"topology '{name_or_path}' not found ({path}); known: {', '.join(known)}") from None
    except json.JSONDecodeError as e:
        raise TopologyError(f"{path}:{e.lineno}:{e.colno}: invalid JSON: {e.msg}") from None
    return parse(doc, str(path))


def parse(doc, where="<topology>"):
    def fail(msg):
        raise TopologyError(f"{where}: {msg}")

    if not isinstance(doc, dict):
        fail("top level must be an object")
    unknown = set(doc) - _KEYS
    if unknown:
        fail(f"unknown key(s) {sorted(unknown)}; allowed: {sorted(_KEYS)}")
    for key in ("name", "switches", "links", "ingress", "egress"):
        if key not in doc:
            fail(f"missing '{key}'")

    names = set()

    def node_name(kind, i, entry):
        name = entry.get("name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not _NAME.match(name):
            fail(f"{kind}[{i}]: name {name!r} must match {_NAME.pattern}")
        if name in names:
            fail(f"{kind}[{i}]: duplicate node name '{name}'")
        names.add(name)
        return name

    def mac(kind, i, value):
        if not isinstance(value, str) or not _MAC.match(value):
            fail(f"{kind}[{i}]: mac {value!r} is not a lower-case aa:bb:cc:dd:ee:ff address")
        return value

    switches, dpids = [], set()
    for i, s in enumerate(doc["switches"]):
        name = node_name("switches", i, s)
        dpid = s.get("dpid")
        if not isinstance(dpid, int) or not 0 < dpid < 1 << 48 or dpid in dpids:
            fail(f"switches[{i}] '{name}': dpid {dpid!r} must be a unique integer in 1..2^48-1")
        dpids.add(dpid)
        switches.append(Switch(name, dpid))

    hosts = []
    for i, h in enumerate(doc.get("hosts", [])):
        name = node_name("hosts", i, h)
        try:
            ipaddress.ip_interface(h.get("ip"))
        except (ValueError, TypeError):
            fail(f"hosts[{i}] '{name}': ip {h.get('ip')!r} is not an address/prefix")
        hosts.append(Host(name, h["ip"], mac("hosts", i, h.get("mac"))))

    servers = []
    for i, s in enumerate(doc.get("servers", [])):
        name = node_name("servers", i, s)
        cores = s.get("cores")
        if not isinstance(cores, int) or cores < 1:
            fail(f"servers[{i}] '{name}': cores {cores!r} must be a positive integer")
        nics = []
        for j, n in enumerate(s.get("nics", [])):
            if not isinstance(n, dict) or not isinstance(n.get("name"), str) or not _IFACE.match(n["name"]):
                fail(f"servers[{i}] '{name}' nics[{j}]: name must match {_IFACE.pattern}")
            nics.append(Nic(n["name"], mac(f"servers[{i}].nics", j, n.get("mac"))))
        if not nics:
            fail(f"servers[{i}] '{name}': needs at least one NIC")
        servers.append(Server(name, cores, tuple(nics)))

    kinds = {s.name: "switch" for s in switches}
    kinds.update({h.name: "host" for h in hosts})
    kinds.update({s.name: "server" for s in servers})
    nic_names = {s.name: {n.name for n in s.nics} for s in servers}

    def endpoint(text, where_):
        if not isinstance(text, str) or text.count(":") != 1:
            fail(f"{where_}: endpoint {text!r} must be 'node:port'")
        node, port = text.split(":")
        kind = kinds.get(node)
        if kind is None:
            fail(f"{where_}: endpoint '{text}' names unknown node '{node}'")
        if kind == "switch" and not (port.isdigit() and 0 < int(port) < 0xff00):
            fail(f"{where_}: switch port '{port}' in '{text}' must be an OpenFlow port number 1..65279")
        if kind == "server" and port not in nic_names[node]:
            fail(f"{where_}: server '{node}' has no NIC '{port}' (has {sorted(nic_names[node])})")
        if kind == "host" and port != "eth0":
            fail(f"{where_}: hosts have one interface, 'eth0', not '{port}'")
        return Endpoint(node, str(int(port)) if kind == "switch" else port)

    links, used = [], set()
    for i, link in enumerate(doc["links"]):
        if not isinstance(link, list) or len(link) != 2:
            fail(f"links[{i}]: a link is a pair [\"a:port\", \"b:port\"]")
        a, b = (endpoint(x, f"links[{i}]") for x in link)
        for e in (a, b):
            if e in used:
                fail(f"links[{i}]: endpoint '{e}' is already linked")
            used.add(e)
        if a.node == b.node:
            fail(f"links[{i}]: links '{a}' to its own node")
        if "switch" not in (kinds[a.node], kinds[b.node]):
            fail(f"links[{i}]: '{a}'-'{b}' must have a switch on at least one end")
        links.append((a, b))
    for h in hosts:
        if Endpoint(h.name, "eth0") not in used:
            fail(f"host '{h.name}' is not linked")
    for s in servers:
        for n in s.nics:
            if Endpoint(s.name, n.name) not in used:
                fail(f"server '{s.name}' NIC '{n.name}' is not linked")

    def edge_points(key):
        out = []
        for i, text in enumerate(doc[key]):
            e = endpoint(text, f"{key}[{i}]")
            if kinds[e.node] != "switch" or e not in used:
                fail(f"{key}[{i}]: '{text}' must be a linked switch port")
            out.append(e)
        if not out:
            fail(f"'{key}' needs at least one switch port")
        return tuple(out)

    return Topology(doc["name"], doc.get("description", ""), tuple(switches), tuple(hosts), tuple(servers),
                    tuple(links), edge_points("ingress"), edge_points("egress"), where)
