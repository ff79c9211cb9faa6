package org.metron.drivers.p4;

import org.junit.Test;
import org.onlab.packet.Ip4Address;
import org.onlab.packet.MacAddress;
import org.onlab.packet.VlanId;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.pi.model.PiMatchType;
import org.onosproject.net.pi.model.PiPipeconf;
import org.onosproject.net.pi.model.PiPipelineInterpreter;
import org.onosproject.net.pi.model.PiPipelineInterpreter.PiInterpreterException;
import org.onosproject.net.pi.model.PiTableId;
import org.onosproject.net.pi.model.PiTableModel;
import org.onosproject.net.pi.runtime.PiAction;

import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

public class MetronTaggerInterpreterTest {

    private final MetronTaggerInterpreter interpreter = new MetronTaggerInterpreter();
    private final PiPipeconf pipeconf = MetronTaggerPipeconf.build();

    @Test
    public void pipeconfModelIsTheP4Program() {
        assertTrue(pipeconf.implementation(PiPipelineInterpreter.class).isPresent());
        assertTrue(pipeconf.extension(PiPipeconf.ExtensionType.P4_INFO_TEXT).isPresent());
        PiTableModel t = pipeconf.pipelineModel().table(TaggerP4Names.TAGGER).orElseThrow();
        assertEquals(9, t.matchFields().size());
        assertEquals(4096, t.maxSize());
        Map.of(TaggerP4Names.INGRESS_PORT, 9, TaggerP4Names.IPV6_SRC, 128, TaggerP4Names.L4_DST_PORT, 16)
                .forEach((f, w) -> assertEquals(f.id(), (int) w, t.matchField(f).orElseThrow().bitWidth()));
        assertEquals(PiMatchType.RANGE, t.matchField(TaggerP4Names.L4_SRC_PORT).orElseThrow().matchType());
        assertEquals(PiMatchType.TERNARY, t.matchField(TaggerP4Names.IPV4_DST).orElseThrow().matchType());
        assertEquals(4, t.actions().size());
        assertEquals(3, t.action(TaggerP4Names.PUSH_VLAN_TAG).orElseThrow().params().size());
        // every criterion the interpreter maps names a field of the table
        for (Criterion.Type type : Criterion.Type.values()) {
            interpreter.mapCriterionType(type).ifPresent(f -> assertTrue(f.id(), t.matchField(f).isPresent()));
        }
    }

    @Test
    public void mapsTagTreatments() throws Exception {
        PiAction a = interpreter.mapTreatment(DefaultTrafficTreatment.builder()
                .setEthDst(MacAddress.valueOf("02:4d:00:01:00:02")).setOutput(PortNumber.portNumber(5)).build(),
                                              TaggerP4Names.TAGGER);
        assertEquals(TaggerP4Names.SET_TAG_MAC, a.id());
        assertEquals(TaggerP4Names.DROP,
                     interpreter.mapTreatment(DefaultTrafficTreatment.emptyTreatment(), TaggerP4Names.TAGGER).id());
        assertEquals(TaggerP4Names.DROP, interpreter.getOriginalDefaultAction(TaggerP4Names.TAGGER).orElseThrow().id());
        assertFalse(interpreter.mapFlowRuleTableId(1).isPresent());
    }

    private void refused(TrafficTreatment t, String expected) {
        PiInterpreterException e = assertThrows(PiInterpreterException.class,
                                                () -> interpreter.mapTreatment(t, TaggerP4Names.TAGGER));
        assertTrue(e.getMessage(), e.getMessage().contains(expected));
    }

    @Test
    public void refusesWhatTheProgramCannotDo() {
        PortNumber out = PortNumber.portNumber(1);
        refused(DefaultTrafficTreatment.builder().setIpSrc(Ip4Address.valueOf("1.2.3.4")).setOutput(out).build(),
                "IPV4_SRC");
        refused(DefaultTrafficTreatment.builder().setVlanId(VlanId.vlanId((short) 3)).setOutput(out).build(),
                "pushVlan");
        refused(DefaultTrafficTreatment.builder().setEthDst(MacAddress.valueOf("02:4d:00:01:00:02")).build(),
                "output port");
        refused(DefaultTrafficTreatment.builder().setOutput(PortNumber.CONTROLLER).build(), "physical ports");
        refused(DefaultTrafficTreatment.builder().setOutput(out).setOutput(PortNumber.portNumber(2)).build(),
                "one port");
        PiInterpreterException e = assertThrows(PiInterpreterException.class, () -> interpreter.mapTreatment(
                DefaultTrafficTreatment.builder().setOutput(out).build(), PiTableId.of("Other.table")));
        assertTrue(e.getMessage(), e.getMessage().contains("Other.table"));
        assertThrows(PiInterpreterException.class, () -> interpreter.mapOutboundPacket(null));
    }

    @Test
    public void translatorRefusesUnmappedCriteriaAndZeroPriority() {
        DeviceId dev = DeviceId.deviceId("device:p4:1");
        PiInterpreterException e = assertThrows(PiInterpreterException.class, () -> PiTableEntryTranslator.translate(
                DefaultFlowRule.builder().forDevice(dev).withCookie(0xbeef).withPriority(5).forTable(0)
                        .withSelector(DefaultTrafficSelector.builder().matchVlanId(VlanId.vlanId((short) 3)).build())
                        .withTreatment(DefaultTrafficTreatment.emptyTreatment()).makePermanent().build(),
                pipeconf.pipelineModel(), interpreter));
        assertTrue(e.getMessage(), e.getMessage().contains("beef") && e.getMessage().contains("VLAN_VID"));
        e = assertThrows(PiInterpreterException.class, () -> PiTableEntryTranslator.translate(
                DefaultFlowRule.builder().forDevice(dev).withCookie(1).withPriority(0).forTable(0)
                        .withSelector(DefaultTrafficSelector.emptySelector())
                        .withTreatment(DefaultTrafficTreatment.emptyTreatment()).makePermanent().build(),
                pipeconf.pipelineModel(), interpreter));
        assertTrue(e.getMessage(), e.getMessage().contains("priority"));
    }
}
