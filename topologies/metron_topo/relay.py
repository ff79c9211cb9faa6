"""OpenFlow relay between a topology's OVS namespace and the controller in the root namespace.

Each topology runs its ovs-vswitchd in a namespace of its own: every userspace datapath opens a tap named
"ovs-netdev", and two in one namespace collide (EBUSY), so two topologies could not run side by side. The
switches there reach the controller through this relay: it listens on the OVS namespace's loopback and opens,
per switch connection, one to the controller's address in the root namespace (a socket keeps the namespace it
was created in). A controller that is down closes the switch's connection; OVS retries as it would directly.

usage: python3 -m metron_topo.relay NETNS TARGET_HOST TARGET_PORT PORT_FILE
"""
import ctypes
import errno
import os
import selectors
import socket
import sys

CLONE_NEWNET = 0x40000000
BUF = 1 << 18


def setns(fd):
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def listen_in(netns):
    """A listening socket on 127.0.0.1 of `netns`; the calling thread is back in its own namespace after."""
    own = os.open("/proc/self/ns/net", os.O_RDONLY)
    target = os.open(f"/run/netns/{netns}", os.O_RDONLY)
    try:
        setns(target)
        try:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(("127.0.0.1", 0))
            s.listen(64)
        finally:
            setns(own)
    finally:
        os.close(own)
        os.close(target)
    return s


class Pipe:
    """One switch connection and its controller connection; bytes are copied both ways as they come."""

    def __init__(self, sel, a, b):
        self.sel, self.ends = sel, (a, b)
        self.pending = {a: b"", b: b""}  # bytes waiting to be written to that socket
        self.watched = set()
        for s in self.ends:
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.update()

    def other(self, s):
        return self.ends[1] if s is self.ends[0] else self.ends[0]

    def events(self, s):
        ev = selectors.EVENT_WRITE if self.pending[s] else 0
        # Stop reading from a side whose peer cannot keep up (back-pressure instead of unbounded buffering).
        if len(self.pending[self.other(s)]) < BUF:
            ev |= selectors.EVENT_READ
        return ev

    def update(self):
        for s in self.ends:
            ev = self.events(s)
            registered = s in self.watched
            if ev and registered:
                self.sel.modify(s, ev, self)
            elif ev:
                self.sel.register(s, ev, self)
                self.watched.add(s)
            elif registered:  # nothing to write and the peer's backlog is full: wait for the peer's drain
                self.sel.unregister(s)
                self.watched.discard(s)

    def handle(self, s, mask):
        try:
            if mask & selectors.EVENT_READ:
                data = s.recv(BUF)
                if not data:
                    return self.close()
                self.pending[self.other(s)] += data
            for end in self.ends:
                if self.pending[end]:
                    try:
                        n = end.send(self.pending[end])
                        self.pending[end] = self.pending[end][n:]
                    except BlockingIOError:
                        pass
            self.update()
        except OSError:
            self.close()

    def close(self):
        for s in self.ends:
            if s in self.watched:
                self.sel.unregister(s)
            s.close()
        self.watched.clear()


def main(argv):
    netns, host, port, port_file = argv[1], argv[2], int(argv[3]), argv[4]
    lsock = listen_in(netns)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(lsock.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    sel = selectors.DefaultSelector()
    sel.register(lsock, selectors.EVENT_READ, None)
    while True:
        for key, mask in sel.select():
            if key.data is None:
                switch, _ = lsock.accept()
                try:
                    ctl = socket.create_connection((host, port), timeout=5)
                except OSError as e:
                    if e.errno not in (errno.ECONNREFUSED, errno.ETIMEDOUT, errno.EHOSTUNREACH):
                        print(f"relay: connecting to {host}:{port}: {e}", file=sys.stderr, flush=True)
                    switch.close()
                    continue
                Pipe(sel, switch, ctl)
            else:
                key.data.handle(key.fileobj, mask)


if __name__ == "__main__":
    main(sys.argv)
