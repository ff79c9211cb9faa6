package org.metron.app.impl;


import org.junit.Test;
import org.metron.app.api.MetronException;
import org.metron.synth.TagType;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;
import static org.junit.Assert.assertTrue;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/** The original Metron netcfg chain format is translated to chain JSON. */
public class NetcfgTranslatorTest {
    static final String NETCFG = "{\"apps\": {\"org.onosproject.metron.apps\": {\"add\": {\"serviceChains\": [{"
            + "\"name\": \"fw\", \"type\": \"click\", \"networkId\": 1, \"cpuCores\": 2, \"maxCpuCores\": 4,"
            + " \"scale\": true, \"autoScale\": true, \"scope\": \"network-vlan\","
            + " \"components\": [{\"name\": \"fw\", \"class\": \"Firewall\"}],"
            + " \"processors\": [{\"name\": \"fw\", \"blocks\": ["
            + "   {\"instance\": \"in\", \"block\": \"FromDevice\", \"configArgs\": \"in0\"},"
            + "   {\"instance\": \"f\", \"block\": \"IPFilter\", \"configArgs\": \"allow udp, deny all\"},"
            + "   {\"instance\": \"out\", \"block\": \"ToDevice\", \"configArgs\": \"out0\"}],"
            + "  \"graph\": [{\"src\": \"in\", \"dst\": \"f\", \"srcOutputPort\": 0, \"dstInputPort\": 0},"
            + "            {\"src\": \"f\", \"dst\": \"out\", \"srcOutputPort\": 0, \"dstInputPort\": 0}]}],"
            + " \"topology\": {\"network\": [],"
            + "   \"ingressPoints\": [{\"deviceId\": \"of:0000000000000001\", \"port\": \"1\", \"nf\": \"fw\","
            + " \"interface\": \"in0\"}],"
            + "   \"egressPoints\": [{\"deviceId\": \"of:0000000000000001\", \"port\": \"3\", \"nf\": \"fw\","
            + " \"interface\": \"out0\"}]}}]}}}}";

    @Test
    public void translatesBlocksGraphTopologyAndScope() {
        ParsedChain pc = ChainRequests.parse(NETCFG);
        assertEquals("fw", pc.id().name());
        assertEquals(TagType.VLAN, pc.deployment().tagType());
        assertEquals(2, pc.deployment().cpuCores());
        assertEquals(4, pc.deployment().maxCpuCores());
        assertTrue(pc.deployment().autoScale());
        assertEquals("of:0000000000000001/1", ingress(pc.deployment()).toString());
        assertEquals("of:0000000000000001/3", egress(pc.deployment()).toString());
        String click = pc.spec().nfs().get(0).click();
        assertTrue(click, click.contains("f :: IPFilter(allow udp, deny all);"));
        assertTrue(click, click.contains("in [0] -> [0] f;"));
        assertEquals("fw.in0", pc.spec().ingress().get(0).toString());
    }

    @Test
    public void namesTheMissingField() {
        MetronException e = assertThrows(MetronException.class, () -> ChainRequests.parse(
                NETCFG.replace("\"scope\": \"network-vlan\"", "\"scope\": \"server-magic\"")));
        assertEquals(MetronException.Fault.INVALID_CHAIN, e.fault());
        assertTrue(e.getMessage(), e.getMessage().contains("serviceChains[0].scope"));
        MetronException p = assertThrows(MetronException.class, () -> ChainRequests.parse(
                NETCFG.replace("\"processors\"", "\"procs\"")));
        assertTrue(p.getMessage(), p.getMessage().contains("serviceChains[0].processors"));
    }

    @Test
    public void wrongTypesAreErrorsNotDefaults() {
        MetronException cores = assertThrows(MetronException.class, () -> ChainRequests.parse(
                NETCFG.replace("\"cpuCores\": 2", "\"cpuCores\": \"two\"")));
        assertEquals(MetronException.Fault.INVALID_CHAIN, cores.fault());
        assertTrue(cores.getMessage(), cores.getMessage().contains("serviceChains[0].cpuCores must be an integer"));
        MetronException max = assertThrows(MetronException.class, () -> ChainRequests.parse(
                NETCFG.replace("\"maxCpuCores\": 4", "\"maxCpuCores\": 4.5")));
        assertTrue(max.getMessage(), max.getMessage().contains("maxCpuCores must be an integer"));
    }
}
