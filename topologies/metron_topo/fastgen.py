"""Traffic on the fast network: metron-fastgen (topologies/fastgen/metron_fastgen.c) sends from one host's vhost-user
port and counts at another's, per flow (loss, duplicates, reordering by sequence numbers in the payload). It is
recorded in the state file like every process the launcher starts, so `topo down` stops one left running."""
import json
import subprocess
from pathlib import Path

from . import fastnet
from .agent import built_binary

SINK_QUEUE = 32768  # the sink's receive ring (metron_fastgen.c SINK_DESC)


def binary():
    """$METRON_FASTGEN, else the CMake output of `make e2e-build`; None when not built."""
    return built_binary("METRON_FASTGEN", "topologies/fastgen/build/metron-fastgen")


def command(state, rates, seconds, *, src="src", sink="sink", flows=1024, sport=40000, dport=5000,
            dst_mac=None, dst_ip=None, warmup_pps=2000, warmup_seconds=2.0, drain_ms=300):
    """metron-fastgen's command line on a fast topology's state: the source host's port sends flows from its
    address (sport+f -> dport) to `dst_ip`/`dst_mac` (default: the sink host's), the sink host's port counts."""
    if not state.data.get("fast"):
        raise ValueError(f"topology {state['id']} is not a fast network (topo up --fast)")
    exe = binary()
    if exe is None:
        raise RuntimeError("metron-fastgen not built (make e2e-build)")
    hosts = {h["name"]: h for h in state["network"]["hosts"]}
    s_if, k_if = state["nodes"][src]["ifaces"]["eth0"], state["nodes"][sink]["ifaces"]["eth0"]
    eal = ["--lcores", f"0@({fastnet.worker_cpus()})", "--no-pci", "--file-prefix", f"{state['id']}-gen",
           *fastnet.eal_memory(state["huge_dir"], fastnet.FASTGEN_MEMORY_MB),
           "--vdev", f"virtio_user0,path={s_if['socket']},server=1,mac={s_if['mac']},queue_size=1024",
           "--vdev", f"virtio_user1,path={k_if['socket']},server=1,mac={k_if['mac']},queue_size={SINK_QUEUE}"]
    opts = ["--tx", "virtio_user0", "--rx", "virtio_user1", "--flows", str(flows),
            "--src-mac", s_if["mac"], "--dst-mac", dst_mac or k_if["mac"],
            "--src-ip", hosts[src]["ip"].split("/")[0], "--dst-ip", dst_ip or hosts[sink]["ip"].split("/")[0],
            "--sport", str(sport), "--dport", str(dport), "--rates", ",".join(str(int(r)) for r in rates),
            "--seconds", str(seconds), "--warmup-pps", str(warmup_pps), "--warmup-seconds", str(warmup_seconds),
            "--drain-ms", str(drain_ms)]
    return fastnet.niced([exe, *eal, "--", *opts])


def run(state, rates, seconds, timeout=None, **kw):
    """Runs metron-fastgen to the end; answers its steps (one dict per rate, the warmup first, see
    metron_fastgen.c). Its log (EAL, vdevs) goes to <run dir>/fastgen.log."""
    argv = command(state, rates, seconds, **kw)
    timeout = timeout or 60 + len(rates) * (seconds + 10)
    logf = open(Path(state["run_dir"]) / "fastgen.log", "ab")
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=logf, text=True, start_new_session=True)
    logf.close()
    state.record_process("fastgen", p.pid, argv)
    fastnet.boost(p.pid)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        raise RuntimeError(f"metron-fastgen did not finish in {timeout} s; see {state['run_dir']}/fastgen.log")
    steps = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if p.returncode != 0 or len(steps) != len(rates) + (1 if kw.get("warmup_seconds", 2.0) > 0 else 0):
        tail = (Path(state["run_dir"]) / "fastgen.log").read_text(errors="replace").strip().splitlines()[-5:]
        raise RuntimeError(f"metron-fastgen exited {p.returncode} after {len(steps)} steps: " + " | ".join(tail))
    return steps


def lossless(step):
    """Whether a step carried every frame once and in order. Its rate is step["achievedPps"]: the generator's
    schedule slips when it is descheduled (metron_fastgen.c MAX_CATCHUP), so it can be below the rate asked."""
    return step["lost"] == 0 and step["duplicates"] == 0 and step["reordered"] == 0 and not step["stalled"]
