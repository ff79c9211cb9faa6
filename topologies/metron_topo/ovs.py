"""A private Open vSwitch instance (its own ovsdb-server and ovs-vswitchd, userspace datapath) per topology, so
parallel topologies and other users' OVS never share a database or a bridge (shared/notes/dataplane.md)."""
import os
import time
from pathlib import Path

from . import fastnet
from .fastnet import VSWITCHD
from .sh import run

SCHEMA = "/usr/share/openvswitch/vswitch.ovsschema"
# How the userspace datapath attaches the topology's veths (METRON_OVS_PORTS): "system" (default) reads each
# through an AF_PACKET socket in ovs-vswitchd's main thread, which also handles OpenFlow; "afxdp" attaches them
# with AF_XDP (generic XDP on veth) polled by a PMD thread, which spins a whole CPU while the topology is up but
# forwards ~4x more here (docs/scaling.md#at-load: 100 kpps one way vs ~25-50 kpps).
PORT_TYPE = os.environ.get("METRON_OVS_PORTS", "system")
PORT_OPTIONS = {"system": [], "afxdp": ["type=afxdp", "options:xdp-mode=generic"]}
if PORT_TYPE not in PORT_OPTIONS:
    raise ValueError(f"METRON_OVS_PORTS must be one of {sorted(PORT_OPTIONS)}, got {PORT_TYPE!r}")


class Ovs:
    def __init__(self, run_dir):
        self.dir = Path(run_dir) / "ovs"
        self.sock = self.dir / "db.sock"

    @property
    def env(self):
        d = str(self.dir)
        return dict(os.environ, OVS_RUNDIR=d, OVS_DBDIR=d, OVS_LOGDIR=d, OVS_SYSCONFDIR=d, OVS_PKGDATADIR=d)

    def vsctl(self, *args):
        return run(["ovs-vsctl", f"--db=unix:{self.sock}", "--timeout=20"] + list(args), env=self.env)

    def ofctl(self, bridge, *args):
        return run(["ovs-ofctl", "-O", "OpenFlow13"] + [args[0], self.mgmt(bridge)] + list(args[1:]),
                   env=self.env)

    def appctl(self, *args):
        """ovs-appctl to this topology's ovs-vswitchd (ofproto/trace, dpctl/show, ...)."""
        return run(["ovs-appctl", "-t", str(self.dir / "ovs-vswitchd.ctl")] + list(args), env=self.env)

    def mgmt(self, bridge):
        return f"unix:{self.dir}/{bridge}.mgmt"

    def enlarge_port_buffers(self, nbytes):
        """Sets the receive buffer of every AF_PACKET socket of this topology's ovs-vswitchd to `nbytes` and
        answers how many it set. The userspace datapath reads each veth port through one such socket in its main
        thread, which also handles OpenFlow: while it installs a bundle (a scaling re-tag) or is descheduled on a
        busy machine, frames queue there, and the default buffer (net.core.rmem_default, 208 KB: ~270 small
        frames, 27 ms at 10 kpps) overflows (docs/scaling.md#at-load). The sockets are the switch's own; they are
        reached with pidfd_getfd (the same socket, duplicated into this process), so nothing machine-wide changes.
        Ports added later keep the default."""
        import ctypes
        import socket
        libc = ctypes.CDLL(None, use_errno=True)
        pid = self._pid("ovs-vswitchd")
        pidfd = os.pidfd_open(pid)
        done = 0
        try:
            for entry in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if not os.readlink(f"/proc/{pid}/fd/{entry}").startswith("socket:"):
                        continue
                except OSError:
                    continue  # closed meanwhile
                fd = libc.syscall(438, pidfd, int(entry), 0)  # SYS_pidfd_getfd (x86_64)
                if fd < 0:
                    raise OSError(ctypes.get_errno(), f"pidfd_getfd of ovs-vswitchd {pid} fd {entry}")
                try:
                    sock = socket.socket(fileno=fd)
                except OSError:  # a family Python does not know (AF_XDP ports): not a packet socket
                    os.close(fd)
                    continue
                try:
                    if sock.family == socket.AF_PACKET:
                        sock.setsockopt(socket.SOL_SOCKET, 33, nbytes)  # SO_RCVBUFFORCE: above rmem_max, as root
                        done += 1
                finally:
                    sock.close()  # closes the duplicate only
        finally:
            os.close(pidfd)
        return done

    def _pid(self, name):
        pidfile = self.dir / f"{name}.pid"
        for _ in range(100):
            if pidfile.exists() and pidfile.read_text().strip():
                return int(pidfile.read_text())
            time.sleep(0.05)
        raise RuntimeError(f"{name} did not write {pidfile}; see {self.dir}/{name}.log")

    def start(self, state, netns=None, dpdk=None):
        """Starts this instance's daemons (never ovs-ctl: it wants the kernel module). dpdk: other_config for an
        ovs-vswitchd with DPDK (fastnet.dpdk_config), which then runs the DPDK build (fastnet.VSWITCHD)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        run(["ovsdb-tool", "create", str(self.dir / "conf.db"), SCHEMA], env=self.env)
        argv = ["ovsdb-server", str(self.dir / "conf.db"), f"--remote=punix:{self.sock}",
                f"--pidfile={self.dir}/ovsdb-server.pid", f"--unixctl={self.dir}/ovsdb-server.ctl",
                f"--log-file={self.dir}/ovsdb-server.log", "--detach"]
        run(argv, env=self.env)
        state.record_process("ovsdb-server", self._pid("ovsdb-server"), argv)
        self.vsctl("--no-wait", "init")
        if dpdk:
            self.vsctl("--no-wait", "set", "Open_vSwitch", ".",
                       *(f"other_config:{k}={v}" for k, v in dpdk.items()))
        argv = [VSWITCHD if dpdk else "ovs-vswitchd", f"unix:{self.sock}", f"--pidfile={self.dir}/ovs-vswitchd.pid",
                f"--unixctl={self.dir}/ovs-vswitchd.ctl", f"--log-file={self.dir}/ovs-vswitchd.log", "--detach"]
        run(fastnet.niced(argv) if dpdk else argv, env=self.env, netns=netns)
        state.record_process("ovs-vswitchd", self._pid("ovs-vswitchd"), argv)
        if dpdk:
            fastnet.boost(self._pid("ovs-vswitchd"))

    def add_bridge(self, bridge, dpid, ports, controller=None):
        """One ovs-vsctl transaction per bridge: the bridge, its OpenFlow settings and all its ports with their
        declared OpenFlow port numbers. A port is (interface, ofport) with the veth options of METRON_OVS_PORTS,
        or (interface, ofport, [interface options]) (the fast network's vhost-user and memif ports)."""
        args = ["add-br", bridge, "--", "set", "bridge", bridge, "datapath_type=netdev", "protocols=OpenFlow13",
                "fail_mode=secure", f"other-config:datapath-id={dpid:016x}",
                "other-config:disable-in-band=true"]
        for iface, ofport, *options in ports:
            args += ["--", "add-port", bridge, iface, "--", "set", "interface", iface, f"ofport_request={ofport}",
                     *(options[0] if options else PORT_OPTIONS[PORT_TYPE])]
        self.vsctl(*args)
        self._wait_for_mgmt(bridge)
        if controller:
            self.set_controller(bridge, controller)

    def _wait_for_mgmt(self, bridge, timeout=20.0):
        # ovs-vsctl returns once ovsdb committed the bridge; ovs-vswitchd creates the bridge's management socket
        # a little later (on a loaded machine ovs-ofctl calls right after `up` found it missing). A bridge
        # ovs-vswitchd could not create never gets one: fail naming its log (the run dir goes with the teardown).
        sock = self.dir / f"{bridge}.mgmt"
        deadline = time.monotonic() + timeout
        while not sock.exists():
            if time.monotonic() > deadline:
                log = (self.dir / "ovs-vswitchd.log").read_text(errors="replace").splitlines()[-8:]
                raise RuntimeError(f"ovs-vswitchd did not create {sock} within {timeout:.0f} s; its log ends: "
                                   + " | ".join(log))
            time.sleep(0.02)

    def set_controller(self, bridge, target):
        # max_backoff 1 s: a restarted controller gets its switches back within a second, not OVS's default 8 s.
        self.vsctl("set-controller", bridge, target, "--", "set", "controller", bridge, "max_backoff=1000")

    def del_bridge(self, bridge):
        return run(["ovs-vsctl", f"--db=unix:{self.sock}", "--timeout=10", "--if-exists", "del-br", bridge],
                   env=self.env, check=False)
