package org.metron.app.impl;

import org.metron.app.api.Deployments;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo.Role;
import org.metron.app.api.Tag;
import org.metron.synth.TagType;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.InstalledRule;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.drivers.p4.MetronTaggerInterpreter;
import org.metron.drivers.p4.MetronTaggerPipeconf;
import org.metron.drivers.p4.PiTableEntryTranslator;
import org.metron.synth.CompiledChain;
import org.metron.synth.TargetProfile;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.pi.model.PiPipeconf;
import org.onosproject.net.pi.runtime.PiTableEntry;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/** Contract with the drivers: every offload rule the planner emits for a P4 tagger becomes a table entry. */
public class P4TaggerRulesTest {

    private static List<PiTableEntry> entries(TagType type) throws Exception {
        TestNetwork net = new TestNetwork().device(Fixtures.S1, DeviceRole.P4_TAGGER, 4096)
                .device(Fixtures.S2, DeviceRole.OTHER, 0).cable(Fixtures.S1, 2, Fixtures.S2, 1);
        MetronServer server = Fixtures.server(0, new TestAgent("a:1", 4, 0));
        CompiledChain compiled = Fixtures.compiled("p4", TargetProfile.P4_TAGGER);
        List<GroupAssignment> groups = new ArrayList<>();
        for (int g = 0; g < compiled.groups().size(); g++) {
            groups.add(new GroupAssignment("g" + g, Tag.of(type, 3 + g), g, compiled.groups().get(g).classIds()));
        }
        ConnectPoint in = ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1");
        Deployment d = Deployments.of(type, 2, 2, false, in,
                ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/3"), 1);
        Placement p = new Placement(ChainId.of("p4"), Optional.of(server.id()), "eth0", "eth0",
                Optional.of(Fixtures.D1), "P4_TAGGER", groups);
        OffloadChoice o = new OffloadChoice(Fixtures.D1, TargetProfile.P4_TAGGER, compiled,
                net.path(in, server.attachment("eth0").get()).get(), 0, List.of(), List.of());
        DeploymentPlan plan = new RulePlanner(Fixtures.APP, net).plan(ChainId.of("p4"), d, p, Optional.of(server),
                true, o, groups.get(0).tag());
        PiPipeconf pipeconf = MetronTaggerPipeconf.build();
        List<PiTableEntry> out = new ArrayList<>();
        for (InstalledRule r : plan.switchRules().get(Fixtures.D1)) {
            assertEquals("only offload rules on a tagger whose path onward is not programmable", Role.OFFLOAD,
                    r.role());
            out.add(PiTableEntryTranslator.translate(r.rule(), pipeconf.pipelineModel(),
                    new MetronTaggerInterpreter()));
        }
        return out;
    }

    @Test
    public void macAndVlanTaggingRulesTranslate() throws Exception {
        List<PiTableEntry> mac = entries(TagType.MAC);
        assertEquals(4, mac.size());
        assertTrue(mac.get(0).toString(), mac.get(0).priority().isPresent());
        assertTrue(mac.get(0).priority().getAsInt() > mac.get(2).priority().getAsInt());
        assertEquals(4, entries(TagType.VLAN).size());
    }
}
