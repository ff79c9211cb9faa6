"""`topologies/topo up|down|status|list`: the command-line face of the launcher."""
import argparse
import json
import os
import sys

from . import launcher, model, netcfg


def main(argv=None):
    ap = argparse.ArgumentParser(prog="topo", description="Metron emulated topologies (netns + veth + OVS)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("up", help="build a topology; prints the state file to pass to down/status")
    p.add_argument("topology", help="name (topologies/<name>.json) or path")
    p.add_argument("--controller", help="OpenFlow controller for every switch, e.g. tcp:127.0.0.1:6653")
    p.add_argument("--no-agents", action="store_true", help="do not start agents in the server namespaces")
    p.add_argument("--run-root", default=str(launcher.DEFAULT_RUN_ROOT), help="where state and logs go")
    p.add_argument("--id", help="topology id (default: mt + 4 random hex digits)")
    p.add_argument("--tls", action="store_true", default=os.environ.get("METRON_TLS") == "1",
                   help="agents speak mutual TLS with certificates of a lab CA made in <run dir>/tls "
                        "(default: $METRON_TLS=1)")
    p.add_argument("--fast", action="store_true",
                   help="the fast network: OVS-DPDK bridges on hugepages, vhost-user ports, one agent worker per "
                        "server (README.md#fast-network)")
    p = sub.add_parser("down", help="tear down exactly what `up` built")
    p.add_argument("state", help="state file or run directory printed by up")
    p.add_argument("--keep-logs", action="store_true")
    p = sub.add_parser("status", help="show the recorded resources and whether they are alive")
    p.add_argument("state")
    p = sub.add_parser("netcfg", help="ONOS netcfg JSON declaring the running topology's servers (Metron provider)")
    p.add_argument("state")
    sub.add_parser("list", help="list the topology files")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "up":
            state = launcher.up(a.topology, run_root=a.run_root, controller=a.controller,
                                agents=not a.no_agents, topo_id=a.id, tls=a.tls, fast=a.fast,
                                log=lambda m: print(m, file=sys.stderr))
            print(state.path)
        elif a.cmd == "down":
            launcher.down(a.state, keep_logs=a.keep_logs)
        elif a.cmd == "status":
            text, healthy = launcher.status(a.state)
            print(text)
            return 0 if healthy else 1
        elif a.cmd == "netcfg":
            print(json.dumps(netcfg.for_state(a.state), indent=2))
        elif a.cmd == "list":
            for path in sorted(model.TOPOLOGY_DIR.glob("*.json")):
                t = model.load(path)
                print(f"{t.name:<12} {t.description}")
    except (model.TopologyError, FileNotFoundError, RuntimeError) as e:
        print(f"topo: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
