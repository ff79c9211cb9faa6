"""Fast-failover groups across a restart of the embedded host (docs/failover.md#restarts-and-takeovers) on
paper-fig5 (kernel path: veths, userspace OVS): FW(50)->NAPT->LB runs with its s1-s3 link backup armed as OpenFlow
fast-failover groups on s1; the host is killed (SIGKILL: nothing is tidied on the way out) while the chain runs, a
stale group is left in s1 meanwhile (as an arming cut short by the crash would leave one: no rule sends to it), and
the host is started again. Asserted: the restarted host re-arms the chain, reading the switches' group tables back
(OpenFlow GROUP_DESC): every switch holds exactly the groups its rules send to (ovs-ofctl dump-groups), the stale
one is gone and the groups armed before the restart are kept as they were (same ids: adopted, traffic untouched).
Then the s1-s3 link is cut under a steady flow, the host's reaction delayed past the measurement: the switch's
group alone carries the flow over the backup (at most 50 ms worth lost). The same restart and cut with the backup
applied by the host (--failover-groups off) is the comparison: it loses more.
A second test restarts the host with the backup path cut meanwhile (s2-s3 down): the new arming installs none of
the earlier run's backup rules, which the restarted host finds in its store and takes off s2 (and its groups off s1).

Runtime: about 3-4 minutes (three topology bring-ups)."""
import os
import re
import signal
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "deploy" / "demo"))

from metron_demo import linkcut, scenario  # noqa: E402
from metron_demo.session import Session  # noqa: E402
from support import wait_for  # noqa: E402
# the same flow, cut and bound as the test without a restart
from test_fast_failover_e2e import (CUT_AFTER_S, LOSS_BOUND_MS, PPS, REACTION_DELAY_MS, SECONDS,  # noqa: E402
                                    ff_groups, s_groups_dump, tagging_actions)

pytestmark = pytest.mark.system  # skipped until `make build` made the host and the agent (conftest)

STALE = 4242
MODES = {"groups": ["--reroute-delay-ms", str(REACTION_DELAY_MS)], "controller": ["--failover-groups", "off"]}


def group_table(s, switch):
    """{group id: its dump-groups line without the id} as OVS holds them."""
    out = {}
    for line in s_groups_dump(s, switch):
        m = re.search(r"group_id=(\d+),(.*)$", line.strip())
        if m:
            out[int(m.group(1))] = m.group(2)
    return out


def sent_to(s, switch):
    """The groups the switch's rules send to."""
    return {int(g) for line in s.flows(switch) for g in re.findall(r"group:(\d+)", line)}


def host_log(s):
    return (Path(s.state["run_dir"]) / "host.log").read_text()


def restart_killed(s, stale):
    """Kills the host (SIGKILL), leaves a stale fast-failover group in s1 if asked, starts the host again."""
    os.kill(s.host_pid(), signal.SIGKILL)
    s.stop_host()  # reaps it
    if stale:
        bridge = s.state["nodes"]["s1"]["bridge"]
        from metron_topo.ovs import Ovs
        Ovs(s.state["run_dir"]).ofctl(bridge, "add-group", f"group_id={STALE},type=ff,"
                                      "bucket=watch_port:2,actions=output:2,bucket=watch_port:3,actions=output:3")
        assert STALE in group_table(s, "s1")
    s.start_host()


def restart_and_cut(mode, run_root):
    with Session("paper-fig5", run_root=run_root, log=lambda m: None, host_args=MODES[mode]) as s:
        chain, _, _, _ = scenario.deploy(s, "rs", 50)
        assert chain["state"] == "ACTIVE", chain
        r = {"mode": mode}
        if mode == "groups":
            before = wait_for(lambda: ff_groups(s, "s1"), 60, "a fast-failover group on s1")
            tables = {sw: group_table(s, sw) for sw in ("s1", "s2", "s3")}
        else:
            wait_for(lambda: re.search(r"failover backups for .* [1-9]\d* links", host_log(s)), 60, "link backups")
        t0 = time.monotonic()
        restart_killed(s, stale=mode == "groups")  # a host with groups off does not arm nor read them
        if mode == "groups":
            wait_for(lambda: re.search(r"Chain rs: \d+ fast-failover groups .*re-armed", host_log(s)), 90,
                     "the restarted host re-arming the chain")
            print(f"re-armed {time.monotonic() - t0:.1f} s after the kill (host start included)")
            rearmed = re.findall(r"Chain rs: (\d+) fast-failover groups \((\d+) adopted.*re-armed.*; (\d+) stale "
                                 r"groups of the chain and (\d+) groups nothing names deleted, in (\d+) ms",
                                 host_log(s))[-1]
            wait_for(lambda: STALE not in group_table(s, "s1"), 30, "the stale group deleted")
            after = {sw: group_table(s, sw) for sw in ("s1", "s2", "s3")}
            print(f"before the restart: {tables}\nre-armed (groups, adopted, stale, unnamed deleted, ms): {rearmed}\n"
                  f"after: {after}")
            for sw in after:
                assert set(after[sw]) == sent_to(s, sw), f"{sw} holds exactly the groups its rules send to: " \
                                                         f"{after[sw]} vs {sent_to(s, sw)}"
            assert after == tables, "the armed groups are kept as they were (adopted: same ids and buckets)"
            assert int(rearmed[0]) == sum(len(t) for t in after.values()) == int(rearmed[1]), rearmed
            assert int(rearmed[3]) >= 1, rearmed  # the stale one
            assert all(a.startswith("group:") for a in tagging_actions(s)), tagging_actions(s)
            r["rearmed"] = rearmed
            probe = lambda: (ff_groups(s, "s1"), all(a.startswith("group:") for a in tagging_actions(s)))  # noqa
        else:
            wait_for(lambda: re.search(r"Chain rs reconciled: .*re-armed", host_log(s)), 90,
                     "the restarted host recomputing the chain's backups")
            wait_for(lambda: host_log(s).count("Chain rs: failover backups for") >= 2
                     and re.search(r"failover backups for .* [1-9]\d* links", host_log(s).split("re-armed")[-1]),
                     60, "the link backups, computed again")
            assert not any(kind == "ff" for kind, _ in s.groups("s1").values())
            probe = None
        c = linkcut.cut_while_sending(s, "s1", 2, PPS, SECONDS, CUT_AFTER_S, f"{mode}-cut", probe=probe)
        r.update(c)
        if mode == "groups":
            groups_after, still_group = c["probe"]
            assert still_group, "the host acted before the measurement ended: the delay did not hold"
            backup = sum(b[1] for b in groups_after.values())
            assert backup >= PPS * (SECONDS - CUT_AFTER_S) * 0.9, f"the backup buckets carried the flow: {groups_after}"
        wait_for(lambda: "backup precomputed for the link" in s.host.call("GET", "/chains")["chains"][0]
                 .get("reason", ""), 60 + REACTION_DELAY_MS / 1000, "the host's move onto the link backup")
        r["reason"] = s.host.call("GET", "/chains")["chains"][0]["reason"]
        print(f"{mode} after a restart: lost {r['lost']} of {r['sent']} ({r['lost_ms']:.1f} ms worth), gaps "
              f"{r['gaps']}; {r['reason']}", flush=True)
        return r


def test_groups_re_armed_after_a_host_restart_absorb_a_link_cut(tmp_path):
    runs = {mode: restart_and_cut(mode, tmp_path / mode) for mode in MODES}
    ff, ctl = runs["groups"], runs["controller"]
    assert ff["lost_ms"] <= LOSS_BOUND_MS, ff
    assert ff["lost"] < ctl["lost"], (ff, ctl)


def cookies(s, switch):
    """The cookies of the switch's flow entries (Metron's rules carry their flow id; OVS's own have none)."""
    return {m.group(1) for line in s.flows(switch) for m in [re.search(r"cookie=(0x[0-9a-f]+)", line)]
            if m and m.group(1) != "0x0"}


def test_backup_rules_of_an_earlier_run_go_when_the_restarted_host_does_not_arm_them_again(tmp_path):
    with Session("paper-fig5", run_root=tmp_path, log=lambda m: None) as s:
        chain, _, _, _ = scenario.deploy(s, "rs", 50)
        assert chain["state"] == "ACTIVE", chain
        wait_for(lambda: ff_groups(s, "s1"), 60, "a fast-failover group on s1")
        on_s2 = cookies(s, "s2")  # the chain runs s1-s3: all s2 holds is the armed backup's rules
        assert on_s2, "the backup's rules are pre-installed on s2"
        # the host is killed, and the backup path goes while it is down: s2's port to s3
        os.kill(s.host_pid(), signal.SIGKILL)
        s.stop_host()
        from metron_topo import launcher
        launcher.set_port(s.state, "s2", 2, up=False)
        s.start_host()
        rearmed = wait_for(lambda: re.findall(
            r"Chain rs: 0 fast-failover groups \(0 adopted.*\) and 0 backup rules armed \(re-armed.*\); (\d+) "
            r"stale groups of the chain and (\d+) groups nothing names deleted", host_log(s)), 90,
            "the restarted host re-arming the chain (nothing left to arm)")
        print(f"re-armed with nothing (stale groups, unnamed groups deleted): {rearmed[-1]}; s2 held {on_s2}, now "
              f"{cookies(s, 's2')}")
        assert cookies(s, "s2") == set(), "the earlier run's backup rules are gone from s2"
        assert not ff_groups(s, "s1"), "and its groups from s1"
        assert int(rearmed[-1][0]) >= 1, rearmed  # taken out as the chain's, not as groups nothing names
        assert not any(a.startswith("group:") for a in tagging_actions(s)), tagging_actions(s)
        assert s.host.call("GET", "/chains")["chains"][0]["state"] == "ACTIVE"
