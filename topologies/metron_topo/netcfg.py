"""ONOS network configuration for a running topology: one `metron:<agent address>` device per server, with the
switch port each of its NICs is cabled to (the Metron server provider's `metron` config, drivers/README.md), so
an ONOS controlling the topology's switches sees the servers as devices linked to them."""
from . import model
from .state import State


def for_state(state_path):
    state = State.open(state_path)
    topo = model.load(state["topology_file"] or state["topology"])
    devices = {}
    for srv in topo.servers:
        address = state["nodes"].get(srv.name, {}).get("agent")
        if not address:
            raise RuntimeError(f"server {srv.name} has no agent in {state.path} (started with --no-agents?)")
        nics = {}
        for nic in srv.nics:
            peer = topo.peer(model.Endpoint(srv.name, nic.name))
            if peer is not None and any(s.name == peer.node for s in topo.switches):
                nics[nic.name] = f"{topo.switch(peer.node).device_id}/{peer.port}"
        devices[f"metron:{address}"] = {
            "basic": {"name": srv.name, "driver": "metron-server"},
            "metron": {"nics": nics, **state["nodes"][srv.name].get("controller_tls", {})},
        }
    return {"devices": devices}
