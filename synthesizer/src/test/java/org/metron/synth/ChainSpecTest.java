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

    static final String BOX = CHAIN.replace("{\"name\": \"napt\", \"click\": \"FromDevice(in0) -> ToDevice(out0);\"}",
            "{\"name\": \"ids\", \"blackbox\": {\"program\": \"/usr/lib/metron/metron-nf-fwd\", "
            + "\"args\": [\"--drop-port\", \"23\"], \"mode\": \"ring\", \"onFailure\": \"open\", "
            + "\"mayDrop\": true, \"rewrites\": [\"tp_dst\", \"ip_dst\"], \"flowState\": \"pinned\"}}")
            .replace("napt.", "ids.");

    @Test
    public void blackBoxIsReadAndWrittenBack() {
        ChainSpec c = ChainSpec.fromJson(BOX);
        BlackBoxSpec b = c.nf("ids").blackBox().get();
        assertEquals("/usr/lib/metron/metron-nf-fwd", b.program().get());
        assertEquals(BlackBoxSpec.OnFailure.OPEN, b.onFailure());
        assertEquals(java.util.List.of("ip_dst", "tp_dst"), b.rewrites());
        assertEquals(BlackBoxSpec.FlowStatePolicy.PINNED, b.flowState());
        assertEquals("BlackBoxNF(NAME ids, PROGRAM /usr/lib/metron/metron-nf-fwd, ARGS \"--drop-port 23\", MODE RING, "
                + "ON_FAILURE OPEN, RING_SIZE 1024, ATTACH_TIMEOUT 2000)", b.element("ids"));
        assertEquals(c, ChainSpec.fromJson(c.toJson()));
        // defaults: ring, closed, may drop, rewrites nothing
        BlackBoxSpec d = ChainSpec.fromJson(BOX.replaceAll(", \"mode\".*\"pinned\"", "")).nf("ids").blackBox().get();
        assertEquals(BlackBoxSpec.Mode.RING, d.mode());
        assertEquals(BlackBoxSpec.OnFailure.CLOSED, d.onFailure());
        assertTrue(d.mayDrop() && d.rewrites().isEmpty());
        // kernel: the same fields, program and args run in the NF's namespace (docs/blackbox.md, KERNEL mode)
        BlackBoxSpec k = ChainSpec.fromJson(BOX.replace("\"/usr/lib/metron/metron-nf-fwd\"", "\"/usr/sbin/nft\"")
                .replace("[\"--drop-port\", \"23\"]", "[\"-f\", \"/etc/metron/fw.nft\"]")
                .replace("\"mode\": \"ring\"", "\"mode\": \"kernel\"")).nf("ids").blackBox().get();
        assertEquals("BlackBoxNF(NAME ids, PROGRAM /usr/sbin/nft, ARGS \"-f /etc/metron/fw.nft\", MODE KERNEL, "
                + "ON_FAILURE OPEN, RING_SIZE 1024, ATTACH_TIMEOUT 2000)", k.element("ids"));
    }

    @Test
    public void badBlackBoxesNameTheNfAndField() {
        String box = "\"blackbox\": {\"program\"";
        expect(BOX.replace(box, "\"click\": \"x\", " + box), "nfs[1] (ids) has both 'click' and 'blackbox'");
        expect(BOX.replace("\"mode\": \"ring\"", "\"mode\": \"rings\""),
                "nfs[1] (ids).blackbox.mode 'rings' is not one of [ring, memif, kernel]");
        expect(BOX.replace("\"onFailure\": \"open\"", "\"onFailure\": \"maybe\""),
                "nfs[1] (ids).blackbox.onFailure 'maybe' is not one of [closed, open]");
        expect(BOX.replace("\"tp_dst\"", "\"payload\""), "nfs[1] (ids).blackbox.rewrites[0] \"payload\" is not a field");
        expect(BOX.replace("[\"tp_dst\", \"ip_dst\"]", "\"ip_dst\""), "nfs[1] (ids).blackbox.rewrites must be an array");
        expect(BOX.replace("\"/usr/lib/metron/metron-nf-fwd\"", "\"metron-nf-fwd\""),
                "nfs[1] (ids).blackbox.program 'metron-nf-fwd' must be an absolute path");
        expect(BOX.replace("\"23\"", "\"2 3\""), "nfs[1] (ids).blackbox.args[1] '2 3' holds ' '");
        expect(BOX.replace("\"program\": \"/usr/lib/metron/metron-nf-fwd\", ", ""),
                "nfs[1] (ids).blackbox needs exactly one of 'program'");
        expect(BOX.replace("\"mayDrop\": true", "\"mayDrop\": \"yes\""), "nfs[1] (ids).blackbox.mayDrop must be true");
        expect(BOX.replace("\"flowState\": \"pinned\"", "\"flowState\": \"sticky\""),
                "nfs[1] (ids).blackbox.flowState 'sticky' is not one of [none, pinned]");
        expect(BOX.replace("\"mayDrop\"", "\"mayDrops\""), "unknown key 'mayDrops' in nfs[1] (ids).blackbox");
        expect(BOX.replace("\"mode\": \"ring\"", "\"mode\": \"ring\", \"endpoint\": {\"memif\": \"/run/x\"}"),
                "needs exactly one of 'program' (a path to run) and 'endpoint'");
        expect(CHAIN.replace("\"click\": \"FromDevice(in0) -> ToDevice(out0);\"", "\"clik\": \"\""),
                "unknown key 'clik'");
        expect(CHAIN.replace(", \"click\": \"FromDevice(in0) -> ToDevice(out0);\"", ""),
                "nfs[1] (napt) needs 'click' (its Click configuration) or 'blackbox'");
    }

    @Test
    public void blackBoxInterfacesAreIn0AndOut0() {
        try {
            org.metron.synth.Synthesizer.compile(ChainSpec.fromJson(BOX.replace("\"ids.out0\"", "\"ids.out1\"")),
                    TargetProfile.OPENFLOW13);
            fail("accepted");
        } catch (SynthesisException e) {
            assertTrue(e.getMessage(), e.getMessage().contains("names no output of black-box NF 'ids' (its output is out0)"));
        }
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
