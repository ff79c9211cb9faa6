"""Helpers the end-to-end tests share (fixtures are in conftest.py)."""
import subprocess

from metron_demo import chains, traffic
from metron_demo.polling import wait_for  # noqa: F401  (the tests' name for it)

VIP = "10.0.3.100"  # the LB's virtual service in the reply tests: no host owns it


def sh(netns, *argv):
    """Runs a command in a network namespace; raises with its output if it fails."""
    subprocess.run(["ip", "netns", "exec", netns, *argv], check=True, capture_output=True, text=True, timeout=30)


def route_replies_between_hosts(session):
    """The end hosts' setup for chains with replies (FW -> NAPT -> LB): the sink owns the LB's backends and routes
    the NAPT's public address back toward the source; the source routes the virtual service. Nobody owns those
    two addresses, so each gets a neighbour entry (any MAC: the switches classify on IP and ports, and the last
    hop writes the real host's MAC, docs/contracts.md#egress). The agent rewrites with incremental checksum
    updates, so the kernel must put full TCP checksums on the wire, not leave them to a veth's offload."""
    src, sink = session.netns("src"), session.netns("sink")
    for ns in (src, sink):
        sh(ns, "ethtool", "-K", "eth0", "tx", "off")
    for backend in chains.BACKENDS:
        sh(sink, "ip", "addr", "replace", backend + "/32", "dev", "eth0")
    sh(sink, "ip", "route", "replace", chains.NAPT_ADDRESS + "/32", "dev", "eth0")
    sh(sink, "ip", "neigh", "replace", chains.NAPT_ADDRESS, "lladdr", traffic.SRC_MAC, "dev", "eth0")
    sh(src, "ip", "route", "replace", VIP + "/32", "dev", "eth0")
    sh(src, "ip", "neigh", "replace", VIP, "lladdr", traffic.SINK_MAC, "dev", "eth0")
