"""Traffic on the fast network: metron-fastgen (topologies/fastgen/metron_fastgen.c) sends from one host's vhost-user
port and counts at another's, per flow (loss, duplicates, reordering by sequence numbers in the payload). It is
recorded in the state file like every process the launcher starts, so `topo down` stops one left running."""
import json
import subprocess
import time
from pathlib import Path

from . import fastnet
from .agent import built_binary

SINK_QUEUE = 32768  # the sink's receive ring (metron_fastgen.c SINK_DESC)


def binary():
    """$METRON_FASTGEN, else the CMake output of `make e2e-build`; None when not built."""
    return built_binary("METRON_FASTGEN", "topologies/fastgen/build/metron-fastgen")


def command(state, rates, seconds, *, src="src", sink="sink", flows=1024, sport=40000, dport=5000,
            dst_mac=None, dst_ip=None, warmup_pps=2000, warmup_seconds=2.0, drain_ms=300, dports=None):
    """metron-fastgen's command line on a fast topology's state: the source host's port sends flows from its
    address (sport+f -> dport) to `dst_ip`/`dst_mac` (default: the sink host's), the sink host's port counts.
    dports: one destination port per rate (the warmup keeps `dport`)."""
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
            "--drain-ms", str(drain_ms)] + (["--dports", ",".join(str(p) for p in dports)] if dports else [])
    return fastnet.niced([exe, *eal, "--", *opts])


def run(state, rates, seconds, timeout=None, **kw):
    """Runs metron-fastgen to the end; answers its steps (one dict per rate, the warmup first, see
    metron_fastgen.c). Its log (EAL, vdevs) goes to <run dir>/fastgen.log."""
    return Background(state, rates, seconds, **kw).finish(timeout)


class Background:
    """metron-fastgen running while the caller does something else: wait_step(k) returns once step k (0 is the
    warmup when there is one) has started, with its start as CLOCK_REALTIME ns (its lostRanges count from there);
    finish() answers the steps as run() does."""

    def __init__(self, state, rates, seconds, **kw):
        import queue
        import threading
        self.state, self.rates, self.seconds, self.kw = state, rates, seconds, kw
        argv = command(state, rates, seconds, **kw)
        logf = open(Path(state["run_dir"]) / "fastgen.log", "ab")
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=logf, text=True, start_new_session=True)
        logf.close()
        state.record_process("fastgen", self.p.pid, argv)
        fastnet.boost(self.p.pid)
        self.lines = []
        self.events = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.p.stdout:
            if line.startswith("{"):
                doc = json.loads(line)
                (self.events.put if doc.get("event") else self.lines.append)(doc)
        self.events.put(None)

    def wait_step(self, step, timeout=90):
        import queue
        end = time.monotonic() + timeout
        while True:
            try:
                ev = self.events.get(timeout=max(0.1, end - time.monotonic()))
            except queue.Empty:
                ev = None
            if ev is None:
                raise RuntimeError(f"metron-fastgen never started step {step}; see {self.state['run_dir']}/fastgen.log")
            if ev["step"] == step:
                return ev["t0UnixNs"]

    def wait_report(self, step, timeout=60):
        """The report of step k (0 is the warmup when there is one), once metron-fastgen printed it."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for doc in list(self.lines):
                if doc["step"] == step:
                    return doc
            if self.p.poll() is not None and not self.reader.is_alive():
                break
            time.sleep(0.05)
        raise RuntimeError(f"metron-fastgen gave no report of step {step}; see {self.state['run_dir']}/fastgen.log")

    def end_step(self):
        """Ends the running step now (metron-fastgen's SIGUSR1); the next one, if any, starts."""
        import signal
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGUSR1)

    def finish(self, timeout=None):
        timeout = timeout or 60 + len(self.rates) * (self.seconds + 10)
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise RuntimeError(f"metron-fastgen did not finish in {timeout} s; see {self.state['run_dir']}/fastgen.log")
        self.reader.join(10)
        steps = self.lines
        if self.p.returncode != 0 or len(steps) != len(self.rates) + (1 if self.kw.get("warmup_seconds", 2.0) > 0 else 0):
            tail = (Path(self.state["run_dir"]) / "fastgen.log").read_text(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(f"metron-fastgen exited {self.p.returncode} after {len(steps)} steps: " + " | ".join(tail))
        return steps

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def lossless(step):
    """Whether a step carried every frame once and in order. Its rate is step["achievedPps"]: the generator's
    schedule slips when it is descheduled (metron_fastgen.c MAX_CATCHUP), so it can be below the rate asked."""
    return step["lost"] == 0 and step["duplicates"] == 0 and step["reordered"] == 0 and not step["stalled"]
