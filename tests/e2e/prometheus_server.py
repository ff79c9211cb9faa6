"""A real Prometheus server (Debian's `prometheus` package) for e2e tests: generated config, private storage
directory, loopback web port, scrape interval 1 s; stopped (by its pid, the process this module started) on exit."""
import json
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

from metron_topo.ports import free_port  # tests/e2e/conftest puts topologies/ on the path

BINARY = shutil.which("prometheus") or "/usr/bin/prometheus"


def available():
    return Path(BINARY).exists()


class Prometheus:
    """jobs: {name: {"targets": ["host:port"], "basic_auth": (user, password) or None, "path": "/metrics"}}"""

    def __init__(self, workdir, jobs):
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        scrape = []
        for name, job in jobs.items():
            j = {"job_name": name, "metrics_path": job.get("path", "/metrics"),
                 "static_configs": [{"targets": job["targets"]}]}
            if job.get("basic_auth"):
                j["basic_auth"] = {"username": job["basic_auth"][0], "password": job["basic_auth"][1]}
            scrape.append(j)
        config = {"global": {"scrape_interval": "1s", "scrape_timeout": "900ms", "evaluation_interval": "1s"},
                  "scrape_configs": scrape}
        (self.dir / "prometheus.yml").write_text(json.dumps(config))  # YAML is a superset of JSON
        self.proc = None

    def __enter__(self):
        log = open(self.dir / "prometheus.log", "wb")
        self.proc = subprocess.Popen([BINARY, f"--config.file={self.dir / 'prometheus.yml'}",
                                      f"--storage.tsdb.path={self.dir / 'data'}",
                                      f"--web.listen-address=127.0.0.1:{self.port}"],
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited ({self.proc.returncode}): "
                                   + (self.dir / "prometheus.log").read_text()[-2000:])
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(0.2)
        self.__exit__()
        raise RuntimeError("prometheus not ready after 60 s")

    def __exit__(self, *exc):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def api(self, path, **params):
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=10) as r:
            doc = json.loads(r.read().decode())
        assert doc["status"] == "success", doc
        return doc["data"]

    def query(self, expr):
        """Instant query: [(labels, value)]."""
        return [(r["metric"], float(r["value"][1])) for r in self.api("query", query=expr)["result"]]

    def targets(self):
        return {t["scrapeUrl"]: (t["health"], t.get("lastError", ""))
                for t in self.api("targets")["activeTargets"]}

    def wait_for(self, expr, timeout=60, what=None):
        """Polls an instant query until it answers a sample; returns the samples."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            got = self.query(expr)
            if got:
                return got
            time.sleep(0.5)
        raise AssertionError(f"{what or expr}: no sample after {timeout} s; targets: {self.targets()}")
