package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.net.flow.FlowRule;

import java.util.List;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

/** The controller with the real synthesizer: a firewall chain's classes become prioritized OpenFlow rules. */
public class RealSynthesizerTest {

    @Test
    public void firewallChainIsSynthesizedPlacedAndOffloaded() {
        World w = new World(1, Synthesis.SYNTHESIZER, 3);
        assertEquals(ChainState.ACTIVE, w.manager.submit(Fixtures.chainJson("fw")).state());
        List<TrafficClassInfo> classes = w.manager.trafficClasses(ChainId.of("fw"));
        assertTrue(classes.toString(), classes.size() >= 2);

        List<FlowRule> offload = w.manager.rules(Fixtures.D1).stream()
                .filter(r -> r.role() == RuleInfo.Role.OFFLOAD).map(RuleInfo::rule).collect(Collectors.toList());
        assertTrue(offload.toString(), !offload.isEmpty());
        // first-match order survives: priorities never increase along the synthesizer's rule order
        List<Integer> prios = offload.stream().map(FlowRule::priority).collect(Collectors.toList());
        for (int i = 1; i < prios.size(); i++) {
            assertTrue(prios.toString(), prios.get(i) <= prios.get(i - 1));
        }
        w.manager.remove(ChainId.of("fw"));
        assertEquals(0, w.switches.total());
    }

    @Test
    public void firewallThenNaptRunsItsStatefulPartOnAServer() {
        String json = "{\"name\": \"fw-napt\", \"nfs\": ["
                + "{\"name\": \"fw\", \"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> IPFilter(allow tcp "
                + "dst port 80, allow udp, deny all) -> Unstrip(14) -> ToDevice(out0);\"},"
                + "{\"name\": \"napt\", \"click\": \"FromDevice(in0) -> Strip(14) -> CheckIPHeader -> rw :: "
                + "IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop) -> Unstrip(14) -> ToDevice(out0);\"}],"
                + " \"links\": [{\"from\": \"fw.out0\", \"to\": \"napt.in0\"}], \"ingress\": [\"fw.in0\"],"
                + " \"egress\": [\"napt.out0\"], \"deployment\": {\"tagType\": \"vlan\", \"cpuCores\": 2,"
                + " \"ingressPoint\": \"" + Fixtures.S1 + "/1\", \"egressPoint\": \"" + Fixtures.S1 + "/3\"}}";
        World w = new World(2, Synthesis.SYNTHESIZER, 3);
        assertEquals(ChainState.ACTIVE, w.manager.submit(json).state());
        org.metron.app.api.Placement p = w.manager.placement(ChainId.of("fw-napt")).get();
        assertTrue(p.server().isPresent());
        assertTrue(!p.groups().isEmpty());
        org.metron.app.testing.TestAgent agent = w.agents.get(p.server().get().toString().endsWith("0") ? 0 : 1);
        org.metron.agent.v1.DeployPipelineRequest req = agent.pipelines().get("fw-napt");
        assertTrue(req.getGroups(0).getClickConfig(), req.getGroups(0).getClickConfig().contains("input"));
        assertEquals(p.groups().size(), agent.nicRules().size());
        // TCP/80 and UDP are tagged toward the server, the rest is dropped on the switch
        List<RuleInfo> off = w.manager.rules(Fixtures.D1).stream().filter(r -> r.role() == RuleInfo.Role.OFFLOAD)
                .collect(Collectors.toList());
        assertTrue(off.toString(), off.stream().anyMatch(r -> r.rule().treatment().allInstructions().toString()
                .contains("VLAN_PUSH")));
        w.manager.remove(ChainId.of("fw-napt"));
        assertEquals(0, w.switches.total());
        assertTrue(agent.pipelines().isEmpty());
    }

    @Test
    public void unknownElementIsAnInvalidChainNamingIt() {
        World w = new World(1, Synthesis.SYNTHESIZER, 3);
        MetronException e = assertThrows(MetronException.class, () -> w.manager.submit(
                Fixtures.chainJson("bad").replace("IPFilter", "NoSuchFilter")));
        assertEquals(MetronException.Fault.INVALID_CHAIN, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("NoSuchFilter"));
        assertTrue(w.manager.chains().isEmpty());
    }
}
