#!/usr/bin/python3
"""`make demo`: paper-fig3 on this machine, the embedded host, FW(1000 rules)->NAPT->LB submitted over REST,
real allowed+denied traffic, a report, and a teardown that leaves nothing behind."""
import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from metron_demo import scenario  # noqa: E402
from metron_demo.session import Session  # noqa: E402
from metron_topo import agent as topo_agent, model  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rules", type=int, default=1000, help="firewall rules (default 1000)")
    ap.add_argument("--topology", default="paper-fig3")
    ap.add_argument("--tls", action="store_true", default=os.environ.get("METRON_TLS") == "1",
                    help="controller and agents speak mutual TLS, certificates from a lab CA (default: $METRON_TLS=1)")
    a = ap.parse_args()
    t0 = time.monotonic()
    print(f"== Metron demo: {a.topology}, FW({a.rules} rules) -> NAPT -> LB"
          + (", agents over mutual TLS" if a.tls else ""))
    servers = len(model.load(a.topology).servers)
    with topo_agent.hugepages(servers), Session(a.topology, tls=a.tls) as s:
        print(f"network up and host ready in {time.monotonic() - t0:.1f} s "
              f"(REST {s.host.rest}, dashboard {s.host.rest.replace('/onos/metron', '/metron/ui/')})")
        out = scenario.run(s, n_rules=a.rules)
        rss = s.rss_mb()
    print("\n== Report")
    for line in out.lines:
        print("  " + line)
    print(f"  submit (synthesize, place, offload, deploy)  {out.submit_ms:.0f} ms")
    print(f"  host resident memory       {rss:.0f} MB")
    print(f"== {'PASS' if out.ok else 'FAIL'}: everything torn down ({time.monotonic() - t0:.1f} s total)")
    return 0 if out.ok else 1


if __name__ == "__main__":
    sys.exit(main())
