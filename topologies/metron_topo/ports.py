"""Port numbers for the listeners the tests, the demo and the topologies start (Karaf's HTTP and console, agents,
OpenFlow listeners, Prometheus).

Taken below the kernel's ephemeral range (net.ipv4.ip_local_port_range, 32768-60999 by default), never from
bind(port 0): a port bind(0) answers is an ephemeral one, free only until the listener binds it, and every outgoing
connection made in between (Karaf's resolver fetching bundles, the readiness probes, gRPC channels) draws its local
port from that same range. CI lost a Karaf that way: its Jetty, 20 s into the boot, "Failed to bind to
/0.0.0.0:42513 ... Address already in use", and the suite's three tests with it. Below the range only a listener
that names its port can collide, and the ones the harness, the demo and the tests name come through this module
(the Java tests' through AgentProcess.freePort, the same rule)."""
import random
import socket

_FLOOR = 20000  # under the range; above the well-known and registered ports daemons are configured with here
_handed = set()  # ports this process has already answered: two calls before the first listener binds differ


def _ephemeral_low(path="/proc/sys/net/ipv4/ip_local_port_range") -> int:
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _bindable(port: int) -> bool:
    # on the wildcard address, without SO_REUSEADDR: refused while any socket holds the port on any address of this
    # namespace, even in TIME_WAIT
    with socket.socket() as s:
        try:
            s.bind(("0.0.0.0", port))
        except OSError:
            return False
    return True


def free_port() -> int:
    """A TCP port no socket holds, below the ephemeral range, not answered before by this process."""
    high = max(_FLOOR + 1000, _ephemeral_low())
    for _ in range(1000):
        port = random.randrange(_FLOOR, high)
        if port not in _handed and _bindable(port):
            _handed.add(port)
            return port
    raise OSError(f"no free TCP port in {_FLOOR}-{high - 1}")
