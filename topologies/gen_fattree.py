#!/usr/bin/python3
"""Writes a k-ary fat-tree topology file (fattree-k4.json is its k=4 output, kept in the repo so the file the
launcher reads is declarative and reviewable). One server per edge-switch host port; src and sink hang off an
extra port of the first and last edge switch."""
import json
import sys


def fattree(k):
    half = k // 2
    switches, servers, links = [], [], []
    dpid = 0

    def switch(name):
        nonlocal dpid
        dpid += 1
        switches.append({"name": name, "dpid": dpid})
        return name

    cores = [switch(f"c{j}") for j in range(half * half)]
    aggs = [[switch(f"a{p}{i}") for i in range(half)] for p in range(k)]
    edges = [[switch(f"e{p}{i}") for i in range(half)] for p in range(k)]
    for p in range(k):
        for i, agg in enumerate(aggs[p]):
            for e, edge in enumerate(edges[p]):
                links.append([f"{edge}:{half + i + 1}", f"{agg}:{e + 1}"])
            for c in range(half):
                core = cores[i * half + c]
                links.append([f"{agg}:{half + c + 1}", f"{core}:{p + 1}"])
        for e, edge in enumerate(edges[p]):
            for h in range(half):
                n = len(servers) + 1
                servers.append({"name": f"srv{n}", "cores": 2,
                                "nics": [{"name": "eth0", "mac": f"02:00:00:00:{n:02x}:01"}]})
                links.append([f"{edge}:{h + 1}", f"srv{n}:eth0"])
    host_port = k + 1
    links.append(["src:eth0", f"{edges[0][0]}:{host_port}"])
    links.append(["sink:eth0", f"{edges[-1][-1]}:{host_port}"])
    return {
        "name": f"fattree-k{k}",
        "description": f"k={k} fat-tree: {len(cores)} core, {k * half} aggregation, {k * half} edge switches, "
                       f"{len(servers)} servers; src on {edges[0][0]}, sink on {edges[-1][-1]}",
        "switches": switches,
        "hosts": [{"name": "src", "ip": "10.0.0.1/24", "mac": "02:00:00:00:00:01"},
                  {"name": "sink", "ip": "10.0.0.2/24", "mac": "02:00:00:00:00:02"}],
        "servers": servers,
        "links": links,
        "ingress": [f"{edges[0][0]}:{host_port}"],
        "egress": [f"{edges[-1][-1]}:{host_port}"],
    }


if __name__ == "__main__":
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    json.dump(fattree(k), sys.stdout, indent=1)
    sys.stdout.write("\n")
