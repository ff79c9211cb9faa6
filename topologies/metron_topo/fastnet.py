"""The fast emulated network (README.md#fast-network, issue 23 item 1): the same topology with OVS-DPDK bridges
instead of veths. Every switch is a `netdev` bridge of an ovs-vswitchd built with DPDK (Debian's
openvswitch-switch-dpdk) on 2 MB hugepages, its datapath run by one PMD thread pinned to the last CPU; every host
and server interface is a vhost-user port of that switch (`dpdkvhostuserclient`: the switch connects, and
reconnects after a restart, to a socket the DPDK process on the other side serves with `net_virtio_user`); a link
between switches is a pair of memif ports (link_port_options: a port whose link a cut takes down). The agents
attach their NICs with net_virtio_user vdevs, the hosts' traffic comes from metron-fastgen (topologies/fastgen).
This module holds what differs from the veth network; launcher.py builds either."""
import os
import socket
import time
from pathlib import Path

from . import hugepages

VSWITCHD = "/usr/lib/openvswitch-switch-dpdk/ovs-vswitchd-dpdk"
# DPDK memory of ovs-vswitchd (its mbuf pools: it shrinks them until they fit) and of the traffic program; the
# launcher reserves these plus the agents' (agent.AGENT_MEMORY_MB each) as hugepages and gives them back at `down`.
OVS_MEMORY_MB = 1024
FASTGEN_MEMORY_MB = 512
# An idle PMD thread sleeps up to this long (us) between polls: the machine's CPUs are shared, and a PMD that
# spins on an idle port takes a whole CPU from everyone (shared/notes/dataplane.md: 43% -> 6% idle, 0 loss up
# to 600 kpps with it).
PMD_MAXSLEEP_US = 100
# Retries of a transmit to a vhost-user peer whose ring is full (OVS's maximum): the agents and the sink are
# descheduled now and then on shared CPUs.
TX_RETRIES_MAX = 32
# Where the vhost-user sockets live: a short path (sun_path holds 108 bytes, a pytest run dir is longer).
SOCKET_ROOT = "/run/metron-vhost"
# An agent's worker sleeps this long (us) per empty poll once idle (agent --idle-sleep), short enough that what
# arrives meanwhile fits its receive ring at 1 Mpps.
AGENT_IDLE_SLEEP_US = 100
# The virtio rings of an agent's NIC (net_virtio_user queue_size) and the descriptors the agent posts on them
# (agent --rxd/--txd; its packet pool is sized from them): the agent shares a CPU with everything else, and what
# the switch cannot hand it while it is descheduled is lost. 8192 frames are 31 ms at 265 kpps. Measured, the agent
# SIGSTOPped at 265 kpps: stops of 10-30 ms lost 0 frames (8 of 8); with the agent's default 1024 descriptors (the
# virtio PMD posts only what it is asked for, whatever the ring's size) a 10 ms stop lost 1773 and 40 ms 9985; with
# 8192 receive descriptors but 1024 for transmit the backlog's burst overflowed the transmit ring instead (195-2720
# frames, counted as the group's drops).
AGENT_QUEUE_SIZE = 8192


# The fast network's data plane (ovs-vswitchd with its PMD thread, the agents, metron-fastgen) runs at this nice
# value: it stands for dedicated cores, and on this machine's 2 shared CPUs a PMD or agent thread that waits
# behind builds for a few ms overflows its ring (measured, FW->NAPT->LB at 250 kpps: at nice 0 and load ~12 the
# PMD waited 27% and the agent 10% of the time and 3% was lost; at -10, 0-0.1% lost at load 11-21; at -20, none
# at load 9-17). Every one of them sleeps when idle, so it takes nothing while no traffic runs. The kernel here
# groups tasks by session (sched_autogroup_enabled=1): a thread's nice then only weighs against its own session's
# threads, and each of these processes has a session of its own (ovs-vswitchd detaches, the launcher starts the
# others with start_new_session), so the session's weight is set too (boost).
NICE = -20
# The embedded host's session beside that data plane (metron_demo.session): it stands for a controller on a machine
# of its own, which the data plane's nice value starves (at 0, ~1% of the CPUs at 265 kpps: its Health polls
# answered 10-15 s late, servers suspected lost, a split's commit step 5-9 s, in CI a chain left DEGRADED by a
# server declared lost). At NICE its bursts took the agents' CPU instead (an operation's step lost 1118-4875
# frames, rings overflowed for 5-21 ms); this weight, a tenth of a data plane process's, is between.
CONTROLLER_NICE = -10


def niced(argv):
    """argv run at nice NICE whatever this process's own nice value (`nice -n` adds to it)."""
    return ["nice", "-n", str(NICE - os.nice(0)), *argv]


def boost(pid, nice=NICE):
    """Gives the session (autogroup) of `pid` the data plane's nice value (or `nice`); a kernel without autogroups
    has none."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(str(nice))
    except OSError:
        pass


def boost_once_serving(pid, address, timeout=30.0):
    """Gives a starting DPDK process the data plane's priority once it accepts TCP connections on `address`
    (host, port): every thread's nice value (DPDK made its lcore threads during start-up; later threads inherit from
    their makers) and its session's. Until then it runs at the launcher's own priority. The data plane's priority
    stands for cores of its own (NICE), and a start-up is no data plane: an agent's takes 0.2-1 s of CPU (measured:
    hugepages zeroed by the kernel, its packet pool filled), which at NICE took that share from the agents already
    serving on the same CPU (a CI run: the serving agent's ring overflowed for 31 ms, 8300 frames, while the drained
    server's agent restarted). Answers whether it was boosted: False if the process ended or did not serve in time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        try:
            socket.create_connection(address, timeout=0.5).close()
        except OSError:
            time.sleep(0.02)
            continue
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                os.setpriority(os.PRIO_PROCESS, int(task.name), NICE)
            except OSError:  # a thread that ended meanwhile
                pass
        boost(pid)
        return True
    return False


def unavailable():
    """Why the fast network cannot be built here, or None."""
    if os.geteuid() != 0:
        return "not root (hugepages, OVS-DPDK)"
    if not os.access(VSWITCHD, os.X_OK):
        return f"{VSWITCHD} missing (apt-get install openvswitch-switch-dpdk; make deps)"
    if not Path("/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages").exists():
        return "no 2 MB hugepages in this kernel"
    return None


def pmd_cpu():
    """The CPU of the switches' PMD thread: the last one (the agents and the traffic program keep to the others)."""
    return max((os.cpu_count() or 1) - 1, 0)


def worker_cpus():
    """CPUs for the agents and the traffic program: all but the PMD's when there are several."""
    n = os.cpu_count() or 1
    return f"0-{n - 2}" if n > 1 else "0"


def memory_mb(agents_mb):
    return OVS_MEMORY_MB + agents_mb + FASTGEN_MEMORY_MB


def reserve_hugepages(state, mb):
    """Reserves hugepages for `mb` MB (agent/scripts/hugepages.sh: added to the kernel's pool, hugetlbfs mounted
    if nothing has it, both recorded in a state file before they happen); answers the hugetlbfs directory.
    Unlike the agents' benchmarks the fast network cannot fall back to --no-huge (vhost-user shares the DPDK
    processes' hugepage memory with the switch), so it fails instead, saying why."""
    record = Path(state["run_dir"]) / "hugepages.state"
    state.data["hugepages"] = str(record)
    state.save()
    line, huge_dir, err = hugepages.reserve(record, mb)
    if not huge_dir:
        raise RuntimeError(f"fast network: {line}; {err}")
    state.data["huge_dir"] = huge_dir
    state.data["hugepages_state"] = line
    state.save()
    return huge_dir


def release_hugepages(state):
    """Gives back what reserve_hugepages added and mounted (idempotent: the record goes with the release)."""
    record = state.data.get("hugepages")
    if record and Path(record).exists():
        hugepages.release(record)


def dpdk_config(huge_dir, topo_id):
    """other_config of the Open_vSwitch row, set before ovs-vswitchd starts: DPDK on our hugetlbfs with its own
    file prefix (never another DPDK process's), no PCI scan (eth0 stays the kernel's), one PMD thread."""
    return {"dpdk-init": "true",
            "dpdk-extra": f"--no-pci --huge-dir={huge_dir} --file-prefix={topo_id}-ovs",
            "dpdk-socket-mem": str(OVS_MEMORY_MB), "dpdk-socket-limit": str(OVS_MEMORY_MB),
            "pmd-cpu-mask": hex(1 << pmd_cpu()), "pmd-maxsleep": str(PMD_MAXSLEEP_US),
            "vhost-iommu-support": "false"}


def runtime_dirs(topo_id):
    """DPDK's runtime directories of the fast network's own processes (ovs-vswitchd, metron-fastgen; the agents'
    are recorded when they start): removed with the topology."""
    return [f"/var/run/dpdk/{topo_id}-ovs", f"/var/run/dpdk/{topo_id}-gen"]


def socket_dir(topo_id):
    return f"{SOCKET_ROOT}/{topo_id}"


def vhost_port_options(sock):
    return ["type=dpdkvhostuserclient", f"options:vhost-server-path={sock}",
            f"options:tx-retries-max={TX_RETRIES_MAX}"]


# A link between two switches is a pair of DPDK memif ports of the one ovs-vswitchd (the a end serves the socket,
# the b end connects), not a pair of patch ports: a patch port cannot be taken down. OVS answers `mod-port down`
# on one with success and changes nothing (its netdev refuses to clear NETDEV_UP, so the port stays LIVE, and
# the datapath resolves patch ports away: measured on paper-fig5 at 245 kpps, 1,250,000 of 1,250,000 frames
# carried across the "cut" and a fast-failover group watching the port never switched). A memif port taken down
# drops what is sent to it and reports PORT_DOWN and LINK_DOWN, which is what a group's watch_port follows
# (measured: the group switched 12 ms after the frames started to drop, 2628 frames lost at 245 kpps).
# n_rxq=2: OVS transmits on the queue of its PMD thread (the second; the first is its main thread's), and a memif
# peer with one receive queue drops everything sent there (shared/notes/dataplane.md).
MEMIF_RXQ = 2


def link_port_options(topo_id, link, end):
    """The interface options of end "a" (memif server) or "b" (client) of switch-switch link number `link`."""
    role = "server" if end == "a" else "client"
    return ["type=dpdk", f"options:dpdk-devargs=net_memif{topo_id}l{link}{end},role={role},"
            f"socket={socket_dir(topo_id)}/l{link}.memif", f"options:n_rxq={MEMIF_RXQ}"]


def vdev_name(index):
    """The DPDK name of a server's index-th NIC: the agent names its ports after their ethdevs, and the controller
    addresses a server's NICs by these names (network view)."""
    return f"virtio_user{index}"


def vdev(index, sock, mac, queue_size=AGENT_QUEUE_SIZE):
    # server=1: the DPDK process serves the socket and the switch (a vhost-user client) connects to it;
    # vectorized=1 with mrg_rxbuf=0 (no rx offloads, as the agent asks) lets the PMD pick its vector receive path
    return (f"{vdev_name(index)},path={sock},server=1,mac={mac},queue_size={queue_size},vectorized=1,"
            "mrg_rxbuf=0")


def eal_memory(huge_dir, mb):
    """EAL memory arguments of a DPDK process that talks vhost-user: its memory must be hugepage files the switch
    can map, in few regions (vhost-user takes at most 8): --single-file-segments, kept in memory (no files left
    behind by a killed process; --huge-unlink cannot go with single files), IOVA as virtual addresses."""
    return ["--huge-dir", huge_dir, "--in-memory", "--single-file-segments", "--iova-mode=va", "-m", str(mb)]
