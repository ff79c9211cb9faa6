#!/usr/bin/python3
"""`make demo`: paper-fig3 on this machine, the embedded host, FW(1000 rules)->NAPT->LB submitted over REST,
real allowed+denied traffic, a report, and a teardown that leaves nothing behind. On the fast network (OVS-DPDK on
hugepages, metron-fastgen at 250 kpps: metron_demo/fastdemo.py) when it can be set up here, else on the kernel
network (veths, scapy/tcpreplay: metron_demo/scenario.py), saying why."""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metron_demo import fastdemo, scenario  # noqa: E402
from metron_demo.session import Session  # noqa: E402
from metron_topo import agent as topo_agent, fastgen, fastnet, model  # noqa: E402

NETWORK_ENV = "METRON_DEMO_NETWORK"


def fast_unavailable():
    """Why the fast network cannot run the demo here, or None."""
    return fastnet.unavailable() or (None if fastgen.binary() else "metron-fastgen not built (make e2e-build)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rules", type=int, default=1000, help="firewall rules (default 1000)")
    ap.add_argument("--topology", default="paper-fig3")
    ap.add_argument("--tls", action="store_true", default=os.environ.get("METRON_TLS") == "1",
                    help="controller and agents speak mutual TLS, certificates from a lab CA (default: $METRON_TLS=1)")
    ap.add_argument("--network", choices=("auto", "fast", "kernel"), default=os.environ.get(NETWORK_ENV, "auto"),
                    help=f"fast: OVS-DPDK on hugepages; kernel: veths; auto (default, or ${NETWORK_ENV}): fast when "
                         "it can be set up")
    ap.add_argument("--pps", type=int, default=fastdemo.PPS, help="fast network: the traffic's rate")
    a = ap.parse_args()
    t0 = time.monotonic()
    print(f"== Metron demo: {a.topology}, FW({a.rules} rules) -> NAPT -> LB"
          + (", agents over mutual TLS" if a.tls else ""))
    why = fast_unavailable() if a.network != "kernel" else f"asked for (--network kernel or {NETWORK_ENV}=kernel)"
    if a.network == "fast" and why:
        print(f"== the fast network cannot run here: {why}")
        return 2
    out = None
    if not why:
        try:
            out, rss = run(a, fast=True)
        except RuntimeError as e:
            if not str(e).startswith("fast network") or a.network == "fast":
                raise
            why = str(e)  # the hugepages could not be had: everything it built is down again
    if out is None:
        print(f"== network: kernel (veths, userspace OVS, tcpreplay); not the fast network: {why}")
        out, rss = run(a, fast=False)
    print("\n== Report")
    for line in out.lines:
        print("  " + line)
    print(f"  submit (synthesize, place, offload, deploy)  {out.submit_ms:.0f} ms")
    print(f"  host resident memory       {rss:.0f} MB")
    print(f"== {'PASS' if out.ok else 'FAIL'}: everything torn down ({time.monotonic() - t0:.1f} s total)")
    return 0 if out.ok else 1


def run(a, fast):
    """Brings the network up, runs the scenario, tears everything down; answers (Outcome, host RSS in MB)."""
    t0 = time.monotonic()
    if fast:
        with Session(a.topology, tls=a.tls, fast=True) as s:
            print(f"== network: fast (OVS-DPDK bridges, vhost-user ports, metron-fastgen) on "
                  f"{s.state.data['hugepages_state']} for this run, given back at the end")
            ready(s, t0)
            return fastdemo.run(s, n_rules=a.rules, pps=a.pps), s.rss_mb()
    servers = len(model.load(a.topology).servers)
    with topo_agent.hugepages(servers), Session(a.topology, tls=a.tls) as s:
        ready(s, t0)
        return scenario.run(s, n_rules=a.rules), s.rss_mb()


def ready(s, t0):
    print(f"network up and host ready in {time.monotonic() - t0:.1f} s "
          f"(REST {s.host.rest}, dashboard {s.host.rest.replace('/onos/metron', '/metron/ui/')})")


if __name__ == "__main__":
    sys.exit(main())
