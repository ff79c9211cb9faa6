package org.metron.synth;

import org.junit.Test;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

public class ChainSpecTest {
    static final String CHAIN = "{\n"
            + "  \"name\": \"fw-napt\",\n"
            + "  \"nfs\": [\n"
            + "    {\"name\": \"fw\", \"click\": \"FromDevice(in0) -> IPFilter(allow udp, deny all) -> ToDevice(out0);\"},\n"
            + "    {\"name\": \"napt\", \"click\": \"FromDevice(in0) -> ToDevice(out0);\"}\n"
            + "  ],\n"
            + "  \"links\": [{\"from\": \"fw.out0\", \"to\": \"napt.in0\"}],\n"
            + "  \"ingress\": [\"fw.in0\"],\n"
            + "  \"egress\": [\"napt.out0\"],\n"
            + "  \"deployment\": {\"tagType\": \"vlan\", \"cpuCores\": 2, \"maxCpuCores\": 4, \"autoScale\": true,\n"
            + "                 \"ingressPoint\": \"of:0000000000000001/1\", \"nics\": 1}\n"
            + "}\n";

    @Test
    public void readsEverySection() {
        ChainSpec c = ChainSpec.fromJson(CHAIN);
        assertEquals("fw-napt", c.name());
        assertEquals(2, c.nfs().size());
        assertEquals(InterfaceRef.of("fw", "out0"), c.links().get(0).from());
        assertEquals(InterfaceRef.of("napt", "out0"), c.egress().get(0));
        assertEquals(TagType.VLAN, c.deployment().tagType());
        assertEquals(4, c.deployment().maxCpuCores());
        assertEquals("of:0000000000000001/1", c.deployment().ingressPoint().get());
        assertEquals(c, ChainSpec.fromJson(c.toJson()));
    }

    @Test
    public void nextHopMacsAreReadAndWrittenBack() {
        ChainSpec c = ChainSpec.fromJson(CHAIN.replace("\"nics\": 1", "\"nics\": 1, \"egressMac\": \"02:00:00:00:00:02\", "
                + "\"replyMac\": \"02:00:00:00:00:01\""));
        assertEquals("02:00:00:00:00:02", c.deployment().egressMac().get());
        assertEquals("02:00:00:00:00:01", c.deployment().replyMac().get());
        assertEquals(c, ChainSpec.fromJson(c.toJson()));
        // without them the chain is still accepted (the controller then looks for the hosts itself)
        assertTrue(ChainSpec.fromJson(CHAIN).deployment().egressMac().isEmpty());
        expect(CHAIN.replace("\"nics\": 1", "\"nics\": 1, \"egressMac\": 2"), "deployment.egressMac must be a string");
    }

    @Test
    public void unknownTopLevelKeyIsAnError() {
        expect(CHAIN.replace("\"links\"", "\"linkz\""), "unknown key 'linkz'");
    }

    @Test
    public void danglingLinkIsAnError() {
        expect(CHAIN.replace("\"to\": \"napt.in0\"", "\"to\": \"nat.in0\""), "dangling edge");
    }

    @Test
    public void malformedJsonNamesLineAndColumn() {
        // Jackson's position is just past the character it could not take (as in the controller's INVALID_JSON)
        expect(CHAIN.replace("\"ingress\": [", "\"ingress\" ["), "at 8:14: chain JSON: Unexpected character ('[' "
                + "(code 91)): was expecting a colon to separate field name and value");
        expect(CHAIN.replace("\"links\"", "\"name\": \"again\", \"links\""), "chain JSON: Duplicate field 'name'");
        expect(CHAIN + " {}", "chain JSON: Trailing token (of type START_OBJECT) found after value");
        expect("[".repeat(65), "at 1:65: chain JSON: nested deeper than 64 levels");
    }

    @Test
    public void duplicateNfIsAnError() {
        expect(CHAIN.replace("\"name\": \"napt\"", "\"name\": \"fw\""), "NF name 'fw' is used twice");
    }

    private static void expect(String json, String fragment) {
        try {
            ChainSpec.fromJson(json);
            fail("accepted bad chain: " + json);
        } catch (SynthesisException e) {
            assertTrue(e.getMessage(), e.getMessage().contains(fragment));
        }
    }
}
