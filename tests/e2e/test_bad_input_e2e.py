"""Bad input on the real system (paper-fig3, the embedded host, a real agent, real OVS, real packets): every kind of
bad submission is refused with a status and a message naming what and where, and the chain already running keeps
its state, its switch rules, its agent pipeline and its traffic. The same holds with the agent down, and the chain
comes back once the agent does."""
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_demo import chains, scenario, traffic  # noqa: E402
from metron_client import HostError  # noqa: E402
from metron_topo import launcher, model  # noqa: E402
from support import wait_for  # noqa: E402

RULES = 100
GOOD = "good"
SWITCHES = ("s1", "s2")
FLOW_COUNTERS = re.compile(r"(duration|n_packets|n_bytes|idle_age|hard_age)=[^,]*, ?")
INGRESS, EGRESS = "of:0000000000000001/1", "of:0000000000000002/1"  # paper-fig3's, as the session reports them

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)


@pytest.fixture(scope="module")
def good(session):
    """The running chain every bad input must leave alone, with traffic checked once; answers its snapshot."""
    assert session.network()["ingress"] == [INGRESS] and session.network()["egress"] == [EGRESS]
    chain, _, _, _ = scenario.deploy(session, GOOD, RULES)
    assert chain["state"] == "ACTIVE"
    assert_traffic_flows(session, "before")
    before = snapshot(session)
    assert scenario.metron_rule_count(session, "s1") >= RULES
    assert before["pipelines"], "the agent runs no group of the good chain"
    return before


def snapshot(session, agent=True):
    """What a refused request must not change: the chain as the host stores it, the placements, tags and rules it
    records, the rules OVS itself holds and the pipelines the agent runs (counters left out: traffic moves them)."""
    rules = [{k: v for k, v in r.items() if k not in ("packets", "bytes")}
             for r in session.host.call("GET", "/rules")["rules"]]
    return {
        "chain": session.host.call("GET", "/chains/" + GOOD),
        "placements": session.host.call("GET", "/placements")["placements"],
        "tags": session.host.call("GET", "/tags")["tags"],
        "rules": sorted(rules, key=lambda r: (r["deviceId"], r["id"])),
        "ovs": ovs_flows(session),
        "pipelines": sorted((g["pipelineId"], g["groupId"], g["core"], tuple(c["classId"] for c in g["classes"]))
                            for g in session.agent_stats()["groups"]) if agent else None,
    }


def assert_host_and_switches_unchanged(session, good):
    """For refusals before placement (the host never calls the agent for them): the snapshot without the agent's
    side, which costs a JVM start to ask and is compared once after all of them."""
    now = snapshot(session, agent=False)
    assert {k: v for k, v in now.items() if k != "pipelines"} == {k: v for k, v in good.items() if k != "pipelines"}


def without_version(snap):
    """A snapshot of a chain that was taken down and brought back: only its version and the reason (which tells the
    outage it came back from) may have moved."""
    return dict(snap, chain={k: v for k, v in snap["chain"].items() if k not in ("version", "reason")})


def ovs_flows(session):
    return {sw: sorted(FLOW_COUNTERS.sub("", line) for line in session.flows(sw)) for sw in SWITCHES}


def assert_traffic_flows(session, tag):
    """Allowed flows reach the sink translated and balanced, denied ones do not (the demo's own verdicts)."""
    run = Path(session.state["run_dir"])
    flow_list = traffic.flows(chains.firewall(RULES)[1], allowed=6, denied=6)
    pcap = run / f"bad-input-{tag}.pcap"
    traffic.write_pcap(pcap, flow_list, 3)
    capture = traffic.Capture(session.netns("sink"), run / f"bad-input-{tag}-sink.pcap")
    try:
        traffic.replay(session.netns("src"), pcap)
        time.sleep(0.7)
    finally:
        packets = capture.stop()
    ok, lines = traffic.check(traffic.analyze(packets), flow_list)
    assert ok, f"traffic {tag}:\n" + "\n".join(lines)


def chain_body(name=GOOD, **deployment):
    """The good chain's definition as a dict (to break it one way or another)."""
    body = json.loads(chains.fw_napt_lb(name, RULES, INGRESS, EGRESS)[0])
    body["deployment"].update(deployment)
    return body


def disjoint_body(name, **deployment):
    """A chain that may share the good chain's ingress point (docs/updates.md#shared-ingress): its firewall allows
    TCP where the good one's allows UDP, with the same denied sources. Refusals of placement use it: an overlapping
    chain is refused for the overlap before any server is asked."""
    body = chain_body(name, **deployment)
    fw = body["nfs"][0]
    fw["click"] = fw["click"].replace(f"allow udp dst port {chains.SERVICE_PORT}",
                                      f"allow tcp dst port {chains.SERVICE_PORT}")
    return body


def refused(session, method, path, body, status, fault, *naming):
    """Sends a request that must fail; checks the status, the fault and that the message names each of naming."""
    data = body if body is None or isinstance(body, bytes) else json.dumps(body).encode()
    with pytest.raises(HostError) as e:
        session.host.call(method, path, data)
    assert e.value.status == status, e.value
    err = json.loads(e.value.body)
    assert err["error"] == fault and err["status"] == status, err
    for what in naming:
        assert what in err["message"], f"{what!r} not named in {err['message']!r}"
    return err["message"]


def chain_names(session):
    return {c["name"]: c for c in session.host.call("GET", "/chains")["chains"]}


def with_click(nf, click):
    body = chain_body("broken")
    next(n for n in body["nfs"] if n["name"] == nf)["click"] = click
    return body


# ---- bad input: nothing stored, nothing touched ----------------------------------------------------------------

def test_truncated_json_is_refused_naming_line_and_column(session, good):
    text = json.dumps(chain_body("truncated"))
    cut = len(text) // 2
    message = refused(session, "POST", "/chains", text[:cut].encode(), 400, "INVALID_JSON", f"line 1:{cut + 1}")
    assert "end-of-input" in message
    refused(session, "POST", "/chains", b"", 400, "INVALID_JSON", "empty")
    refused(session, "PUT", "/chains/" + GOOD, text[:cut].encode(), 400, "INVALID_JSON", f"line 1:{cut + 1}")
    refused(session, "POST", "/chains/validate", text[:cut].encode(), 400, "INVALID_JSON", f"line 1:{cut + 1}")
    assert set(chain_names(session)) == {GOOD}
    assert_host_and_switches_unchanged(session, good)


WRONG_FIELDS = [
    ("cpuCores a string", lambda b: b["deployment"].update(cpuCores="two"), "deployment.cpuCores"),
    ("nfs an object", lambda b: b.update(nfs={"fw": b["nfs"][0]}), "nfs must be an array"),
    ("ingress missing", lambda b: b.pop("ingress"), "'ingress'"),
    ("name missing", lambda b: b.pop("name"), "'name'"),
    ("unknown top-level key", lambda b: b.update(colour="blue"), "colour"),
    ("link to an unknown NF", lambda b: b["links"][0].update(to="nosuch.in0"), "nosuch"),
    ("netcfg without processors", lambda b: b.clear() or b.update(
        apps={"org.onosproject.metron.apps": {"add": {"serviceChains": [{"name": "nc", "processors": []}]}}}),
     "netcfg serviceChains[0].processors"),
]


def test_wrong_types_and_missing_fields_name_the_field(session, good):
    for case, mutate, naming in WRONG_FIELDS:
        body = chain_body("wrong")
        mutate(body)
        try:
            refused(session, "POST", "/chains", body, 422, "INVALID_CHAIN", naming)
        except (AssertionError, pytest.fail.Exception) as e:  # the latter: the host accepted it
            raise AssertionError(f"{case}: {e}") from None
    assert set(chain_names(session)) == {GOOD}
    assert_host_and_switches_unchanged(session, good)


def test_invalid_click_syntax_names_the_nf_line_and_column(session, good):
    napt = ("FromDevice(in0) -> Strip(14) -> CheckIPHeader\n -> rw :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, "
            "drop -> ToDevice(out0);")
    message = refused(session, "POST", "/chains", with_click("napt", napt), 422, "INVALID_CHAIN", "nf 'napt'", "2:21")
    assert "missing ')'" in message
    assert set(chain_names(session)) == {GOOD}
    assert_host_and_switches_unchanged(session, good)


def test_unknown_element_names_the_element_and_where(session, good):
    napt = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> Frobnicate(1) -> Unstrip(14) -> ToDevice(out0);"
    refused(session, "POST", "/chains", with_click("napt", napt), 422, "INVALID_CHAIN", "nf 'napt'",
            "unknown element class 'Frobnicate'", "1:50")
    assert set(chain_names(session)) == {GOOD}
    assert_host_and_switches_unchanged(session, good)


def test_duplicate_name_is_refused_naming_the_chain(session, good):
    refused(session, "POST", "/chains", chain_body(GOOD), 409, "DUPLICATE_CHAIN", "chain good", "ACTIVE", "PUT")
    assert_host_and_switches_unchanged(session, good)


def test_removing_an_unknown_chain_names_it(session, good):
    refused(session, "DELETE", "/chains/nosuch", None, 404, "UNKNOWN_CHAIN", "'nosuch'")
    assert_host_and_switches_unchanged(session, good)


def test_broken_update_keeps_the_running_definition(session, good):
    body = chain_body(GOOD)
    body["nfs"][0]["click"] = ("FromDevice(in0) -> Strip(14) -> CheckIPHeader -> fw :: IPFilter(allow udp dst port "
                               "5000, deny all -> Unstrip(14) -> ToDevice(out0);")
    refused(session, "PUT", "/chains/" + GOOD, body, 422, "INVALID_CHAIN", "nf 'fw'", "1:64", "missing ')'")
    other = chain_body("other")
    refused(session, "PUT", "/chains/" + GOOD, other, 422, "INVALID_CHAIN", "'other'", "'good'")
    assert_host_and_switches_unchanged(session, good)


DEEP = b"[" * 100_000  # a body nested deeper than any parser's stack


def test_deeply_nested_json_leaves_the_host_and_state_alone(session, good):
    with pytest.raises(HostError) as e:
        session.host.call("POST", "/chains", DEEP)
    assert e.value.status is not None  # the host answered, and goes on answering
    assert "<" not in str(e.value)  # the client names the status, not a servlet container's HTML page
    assert set(chain_names(session)) == {GOOD}
    assert_host_and_switches_unchanged(session, good)


def test_deeply_nested_json_is_refused_as_invalid_json(session, good):
    refused(session, "POST", "/chains", DEEP, 400, "INVALID_JSON")


# ---- accepted, then impossible: recorded FAILED holding nothing -------------------------------------------------

def test_impossible_placement_names_the_servers_and_holds_nothing(session, good):
    server = "metron:srv1"
    message = refused(session, "POST", "/chains", disjoint_body("huge", cpuCores=64, maxCpuCores=64), 409,
                      "IMPOSSIBLE_PLACEMENT", "64 free cores", INGRESS, server)
    huge = chain_names(session)["huge"]
    assert huge["state"] == "FAILED" and huge["reason"] == message
    assert snapshot(session) == good  # no placement, tag, rule or pipeline of "huge" anywhere
    session.host.call("DELETE", "/chains/huge")
    assert set(chain_names(session)) == {GOOD}


def test_bad_resubmission_keeps_the_failed_record(session, good):
    try:
        reason = refused(session, "POST", "/chains", chain_body("failed", cpuCores=64, maxCpuCores=64), 409,
                         "IMPOSSIBLE_PLACEMENT")
        body = chain_body("failed")
        body["nfs"][1]["click"] = "FromDevice(in0) -> Frobnicate -> ToDevice(out0);"
        refused(session, "POST", "/chains", body, 422, "INVALID_CHAIN", "Frobnicate")
        failed = chain_names(session).get("failed")
        assert failed is not None, "the FAILED record of 'failed' is gone"
        assert failed["state"] == "FAILED" and failed["reason"] == reason
        assert snapshot(session) == good
    finally:
        if "failed" in chain_names(session):
            session.host.call("DELETE", "/chains/failed")


def test_netcfg_wrong_type_names_the_field(session, good):
    netcfg = {"apps": {"org.onosproject.metron.apps": {"add": {"serviceChains": [{
        "name": "nc", "cpuCores": "two",
        "processors": [{"name": "fw", "click": chains.firewall(RULES)[0]}],
        "topology": {"network": [],
                     "ingressPoints": [{"deviceId": INGRESS.split("/")[0], "port": INGRESS.split("/")[1], "nf": "fw",
                                        "interface": "in0"}],
                     "egressPoints": [{"deviceId": EGRESS.split("/")[0], "port": EGRESS.split("/")[1], "nf": "fw",
                                       "interface": "out0"}]}}]}}}}
    try:
        refused(session, "POST", "/chains", netcfg, 422, "INVALID_CHAIN", "serviceChains[0].cpuCores")
        assert_host_and_switches_unchanged(session, good)
    finally:
        if "nc" in chain_names(session):
            session.host.call("DELETE", "/chains/nc")


def test_an_overlapping_chain_on_a_busy_ingress_names_both_chains_and_a_packet_of_the_overlap(session, good):
    refused(session, "POST", "/chains", chain_body("second"), 409, "IMPOSSIBLE_PLACEMENT",
            f"chain second's traffic and chain good's traffic both enter at {INGRESS} and overlap, e.g. the packet '",
            "ip proto 17")
    assert snapshot(session) == good
    session.host.call("DELETE", "/chains/second")
    assert set(chain_names(session)) == {GOOD}


def test_bad_input_and_refusals_leave_the_agent_and_traffic_alone(session, good):
    assert snapshot(session) == good
    assert_traffic_flows(session, "after-bad-input")


def test_a_restarted_host_keeps_the_refusal_and_the_running_chain(session, good):
    reason = refused(session, "POST", "/chains", disjoint_body("huge", cpuCores=64, maxCpuCores=64), 409,
                     "IMPOSSIBLE_PLACEMENT")
    session.stop_host()
    session.start_host()
    huge = chain_names(session)["huge"]
    assert huge["state"] == "FAILED" and huge["reason"] == reason
    assert snapshot(session) == good
    session.host.call("DELETE", "/chains/huge")
    assert set(chain_names(session)) == {GOOD}


# ---- the same errors through the metron CLI --------------------------------------------------------------------

def metron_cli(session, *args):
    return subprocess.run([str(REPO / "deploy" / "embedded" / "metron"), "--data", str(session.data), *args],
                          capture_output=True, text=True, timeout=180)


def test_cli_reports_the_hosts_error_on_stderr(session, good, tmp_path):
    text = json.dumps(chain_body("cli"))
    cases = {
        "truncated.json": (text[:200], ["(400) INVALID_JSON", "line 1:201"]),
        "unknown.json": (json.dumps(with_click("napt", "FromDevice(in0) -> Frobnicate -> ToDevice(out0);")),
                         ["(422) INVALID_CHAIN", "nf 'napt'", "Frobnicate"]),
        "huge.json": (json.dumps(disjoint_body("huge", cpuCores=64, maxCpuCores=64)),
                      ["(409) IMPOSSIBLE_PLACEMENT", "metron:srv1"]),
    }
    for file, (content, naming) in cases.items():
        (tmp_path / file).write_text(content)
        r = metron_cli(session, "chain-add", str(tmp_path / file))
        assert r.returncode == 1, (file, r.stdout, r.stderr)
        assert "Traceback" not in r.stderr and r.stdout == "", (file, r.stderr)
        error = [line for line in r.stderr.splitlines() if line.startswith("metron: ")]
        assert len(error) == 1, (file, r.stderr)
        assert "<" not in error[0] and "<html" not in r.stderr, (file, r.stderr)
        for what in naming:
            assert what in error[0], (file, what, error[0])
    r = metron_cli(session, "chain-add", str(tmp_path / "missing.json"))
    assert r.returncode == 1 and "Traceback" not in r.stderr and "missing.json" in r.stderr, r.stderr
    r = metron_cli(session, "chain-remove", "nosuch")
    assert r.returncode == 1 and "(404) UNKNOWN_CHAIN" in r.stderr and "'nosuch'" in r.stderr, r.stderr
    session.host.call("DELETE", "/chains/huge")
    assert set(chain_names(session)) == {GOOD}
    assert snapshot(session) == good


def test_cli_reports_a_deeply_nested_file_in_one_line(session, good, tmp_path):
    (tmp_path / "deep.json").write_bytes(DEEP)
    r = metron_cli(session, "chain-add", str(tmp_path / "deep.json"))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    error = [line for line in r.stderr.splitlines() if line.startswith("metron: ")]
    assert len(error) == 1 and "<" not in r.stderr, r.stderr
    assert set(chain_names(session)) == {GOOD}


# ---- an update that cannot be placed (make-before-break: the running version is never touched) ----------------

def test_an_update_that_cannot_be_placed_leaves_the_running_version_untouched(session, good):
    refused(session, "PUT", "/chains/" + GOOD, chain_body(GOOD, cpuCores=64, maxCpuCores=64), 409,
            "IMPOSSIBLE_PLACEMENT", "64 free cores", "its server metron:srv1 cannot take it")
    # The new version is placed before anything is touched (docs/updates.md): the record, version included, the
    # placement, tags, OVS rules and the agent's pipeline are as they were, and packets still cross the chain.
    assert snapshot(session) == good
    assert_traffic_flows(session, "after-update")


# ---- the agent down ---------------------------------------------------------------------------------------------


def stop_agent(session, server="srv1"):
    launcher.stop_process([p for p in session.state["processes"] if p["name"] == f"agent-{server}"][-1])


def start_agent(session, server="srv1"):
    launcher.start_agent(session.state, next(s for s in model.load(session.state["topology_file"]).servers
                                             if s.name == server))


def assert_degraded_on_srv1(session):
    """The good chain while its only server's agent is down: DEGRADED once the failover deadline has passed (never
    ACTIVE while its traffic cannot flow), its pending parts naming that server."""
    chain = wait_for(lambda: (lambda c: c if c["state"] == "DEGRADED" else None)(
        session.host.call("GET", "/chains/" + GOOD)), 15, "the good chain to be DEGRADED")
    assert any("srv1" in p["device"] for p in chain["pending"]), chain


def redeployed(session):
    try:
        return any(g["pipelineId"] == GOOD for g in session.agent_stats()["groups"])
    except RuntimeError:  # the agent is still starting
        return False


def test_agent_down_names_the_agent_and_the_chain_comes_back(session, good, tmp_path):
    address = session.state["nodes"]["srv1"]["agent"]
    stop_agent(session)
    try:
        with pytest.raises(RuntimeError):
            session.agent_stats()  # really down
        message = refused(session, "POST", "/chains", disjoint_body("second"), 502, "AGENT_FAILURE",
                          f"agent {address}", "metron:srv1")
        second = chain_names(session)["second"]
        assert second["state"] == "FAILED" and second["reason"] == message
        # Nothing of "second" went anywhere; the good chain keeps its placement, tags and switch rules, and says
        # that its traffic does not flow: its only server is lost (past the failover deadline), so it is DEGRADED
        assert_degraded_on_srv1(session)
        for key in ("placements", "tags", "rules"):
            assert [x for x in session.host.call("GET", "/" + key)[key] if x["chain"] != GOOD] == []
        unreachable = session.host.call("GET", "/servers")["servers"][0]
        assert not unreachable["reachable"] and address in unreachable["error"]
        (tmp_path / "second.json").write_text(json.dumps(disjoint_body("second")))
        r = metron_cli(session, "chain-add", str(tmp_path / "second.json"))
        assert r.returncode == 1 and "(502) AGENT_FAILURE" in r.stderr and f"agent {address}" in r.stderr, r.stderr
        assert ovs_flows(session) == good["ovs"]
    finally:
        start_agent(session)
    wait_for(lambda: redeployed(session), 60, "the controller to redeploy chain 'good' on the restarted agent")
    assert without_version(snapshot(session)) == without_version(good)
    assert_traffic_flows(session, "after-agent-restart")
    session.host.call("DELETE", "/chains/second")
    assert set(chain_names(session)) == {GOOD}


# Last of all: while this bug stands, the good chain does not survive it.
def test_update_with_the_agent_down_keeps_the_running_chain(session, good):
    address = session.state["nodes"]["srv1"]["agent"]
    stop_agent(session)
    try:
        body = chain_body(GOOD)
        body["deployment"]["maxCpuCores"] = 1  # a valid, different definition
        assert_degraded_on_srv1(session)
        refused(session, "PUT", "/chains/" + GOOD, body, 502, "AGENT_FAILURE", f"agent {address}")
        assert_degraded_on_srv1(session)
        assert ovs_flows(session) == good["ovs"]
    finally:
        start_agent(session)
    wait_for(lambda: redeployed(session), 60, "the controller to redeploy chain 'good' on the restarted agent")
