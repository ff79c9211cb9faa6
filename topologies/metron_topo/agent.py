"""How the launcher starts a Metron agent inside a server's namespace (agent/ owns the binary and its flags)."""
import contextlib
import os
from pathlib import Path

from . import fastnet
from . import hugepages as huge

REPO = Path(__file__).resolve().parents[2]
GRPC_PORT = 50051
# Prometheus endpoint of every emulated agent, on its management address (agent --metrics-listen).
METRICS_PORT = 9464
IDLE_SLEEP_US = 1000
# DPDK memory of each emulated agent (EAL -m); on hugepages when METRON_AGENT_HUGE_DIR names a hugetlbfs mount
# (hugepages() below sets it), else --no-huge.
AGENT_MEMORY_MB = 512
HUGE_DIR_ENV = "METRON_AGENT_HUGE_DIR"
# Set (to 1) with METRON_AGENT_HUGE_DIR: the agents keep their hugepage files (no --huge-unlink) so DPDK secondary
# processes can map them: black-box NFs in MODE RING (docs/blackbox.md). The same switch as agent/scripts/
# hugepages.sh's; remove_hugepage_files() deletes the files once the agents are gone.
HUGE_SHARED_ENV = "METRON_HUGE_MULTIPROCESS"
# Flow state survives an agent restart (saved at SIGTERM) and, up to the last checkpoint, a crash (agent --help).
STATE_CHECKPOINT_MS = 1000
# Frames in each fanout socket's receive ring (agent --fanout-frames): the backlog a worker may leave while it
# waits for a CPU. Emulated workers share this machine's two CPUs with Open vSwitch, the generator and the
# controller's JVM; `perf sched timehist` during the at-load split and merge (docs/scaling.md#at-load) showed a
# worker off-CPU for up to 40 ms behind the JVM's JIT compiler threads (10-19 ms of it runnable, not run), and the
# agent's default 1024 frames hold 13.6 ms at 75 kpps. 8192 hold 109 ms (16 MB per worker socket).
FANOUT_FRAMES = 8192


def built_binary(env, path):
    """An executable: $env, else `path` under the repository (a build output); None when neither is there."""
    for candidate in (os.environ.get(env), REPO / path):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def binary():
    """The agent binary: $METRON_AGENT, else the CMake build output; None when the agent is not built."""
    return built_binary("METRON_AGENT", "agent/build/metron-agent")


@contextlib.contextmanager
def hugepages(agents, log=print):
    """2 MB hugepages for `agents` agents started inside the block (agent/scripts/hugepages.sh: reserved as root,
    hugetlbfs mounted if nothing has it, both undone at the end); the agents fall back to --no-huge, and the log
    says so, when the pages cannot be had. Yields the state line ("hugepages (...)" or "no hugepages (why)")."""
    record = f"/run/metron-hugepages.topo-{os.getpid()}"
    line, huge_dir, _ = huge.reserve(record, agents * AGENT_MEMORY_MB)
    saved = os.environ.get(HUGE_DIR_ENV)
    if huge_dir:
        os.environ[HUGE_DIR_ENV] = huge_dir
    log(f"agents' DPDK memory: {line}")
    try:
        yield line
    finally:
        if saved is None:
            os.environ.pop(HUGE_DIR_ENV, None)
        else:
            os.environ[HUGE_DIR_ENV] = saved
        huge.release(record)


def remove_hugepage_files(file_prefix):
    """Deletes the hugepage files agents with `file_prefix` (a topology id: all its agents) kept (HUGE_SHARED_ENV),
    after they stopped; answers how many. DPDK names them <prefix>map_<n> in the hugetlbfs directory."""
    huge = os.environ.get(HUGE_DIR_ENV)
    if not huge:
        return 0
    files = [f for f in Path(huge).glob(f"{file_prefix}*map_*") if f.is_file()]
    for f in files:
        f.unlink()
    return len(files)


def runtime_dir(file_prefix):
    """Where DPDK keeps an agent's runtime files (removed with the topology)."""
    return f"/var/run/dpdk/{file_prefix}"


def state_dir(run_dir, server_name):
    """Where a server's agent keeps its flow state across restarts (inside the topology's run directory)."""
    return f"{run_dir}/agent-{server_name}.state"


def worker_cores(server, fast=False):
    """Worker cores of a server's agent. On the fast network one: a vhost-user NIC has one queue pair that Open
    vSwitch's one PMD thread fills, and no software PMD here dispatches by tag (shared/notes/dataplane.md), so
    a second worker would never receive a packet; the controller sees one core (network view and GetResources)."""
    return 1 if fast else server.cores


def command(binary_path, server, listen_ip, file_prefix, flow_state_dir, tls=None, vdevs=None, huge_dir=None):
    """Agent command line for a server: gRPC on its management address, each NIC attached through the kernel's
    fanout dispatch (one AF_PACKET socket per worker core, steered by group tag), `cores` worker lcores spread
    over the machine's CPUs (the emulation has more lcores than CPUs). Worker cores are numbered 0..n-1 so that
    a core id equals its fanout socket index: the controller's NIC rules carry the core id as the queue
    (agent.proto NicAction.queue "= core") and the fanout dispatcher uses that value as the socket index.
    `tls`: (cert, key, ca) files: the agent then speaks mutual TLS only. Metrics are served on the management
    address (METRICS_PORT).
    `vdevs` (the fast network, fastnet.py): the NICs are these net_virtio_user vdevs on hugepages in `huge_dir`,
    one worker core (worker_cores) kept off the switches' PMD CPU, instead of fanout sockets."""
    cpus = max(os.cpu_count() or 1, 1)
    cores = worker_cores(server, vdevs is not None)
    argv = [binary_path, "--listen", f"{listen_ip}:{GRPC_PORT}",
            "--cores", ",".join(str(c) for c in range(0, cores)),
            "--metrics-listen", f"{listen_ip}:{METRICS_PORT}"]
    if tls:
        argv += ["--tls-cert", str(tls[0]), "--tls-key", str(tls[1]), "--tls-ca", str(tls[2])]
    if vdevs is None:
        for nic in server.nics:
            argv += ["--fanout", nic.name]
        argv += ["--fanout-frames", str(FANOUT_FRAMES)]
    # Emulated servers share this machine's few CPUs: idle workers sleep instead of spinning (agent --help).
    argv += ["--idle-sleep", str(fastnet.AGENT_IDLE_SLEEP_US if vdevs is not None else IDLE_SLEEP_US)]
    if vdevs is not None:
        argv += ["--rxd", str(fastnet.AGENT_QUEUE_SIZE), "--txd", str(fastnet.AGENT_QUEUE_SIZE)]
    argv += ["--state-dir", flow_state_dir, "--state-checkpoint-ms", str(STATE_CHECKPOINT_MS)]
    if vdevs is not None:
        argv += ["--dpdk", "--lcores", f"(0-{cores - 1})@({fastnet.worker_cpus()})",
                 *fastnet.eal_memory(huge_dir, AGENT_MEMORY_MB), "--no-pci", "--file-prefix", file_prefix]
        for v in vdevs:
            argv += ["--vdev", v]
        return argv + ["--"]
    huge = os.environ.get(HUGE_DIR_ENV)
    shared = os.environ.get(HUGE_SHARED_ENV) == "1"
    memory = (["--huge-dir", huge] + ([] if shared else ["--huge-unlink"])) if huge else ["--no-huge"]
    argv += ["--dpdk", "--lcores", f"(0-{cores - 1})@(0-{cpus - 1})", *memory, "-m", str(AGENT_MEMORY_MB),
             "--no-pci", "--file-prefix", file_prefix, "--"]
    return argv
