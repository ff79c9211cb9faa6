package org.metron.app.rest.codec;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.Test;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.onos.OnosServices;
import org.metron.app.rest.MetronText;
import org.metron.app.testing.Codecs;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.Fixtures.World;
import org.onosproject.codec.impl.CodecManager;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.criteria.Criterion;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertTrue;

/**
 * Metron's codecs in ONOS's real CodecManager (onos-core-common), as REST and the CLI use them: registered and taken
 * back by the one list, and switch rules written as ONOS's own FlowRule codec writes them (the JSON of
 * /onos/v1/flows), so ONOS's codec reads them back into the rules that were installed.
 */
public class MetronCodecsTest {
    private final World w = new World(2, Fixtures.synthesis(), 42);

    private List<RuleInfo> deployedRules() {
        assertEquals(ChainState.ACTIVE, w.manager.submit(Fixtures.chainJson("web")).state());
        List<RuleInfo> rules = w.manager.rules(null);
        assertFalse(rules.isEmpty());
        return rules;
    }

    @Test
    public void theOneListIsRegisteredBesideOnosCodecsAndTakenBack() {
        CodecManager onos = new CodecManager();
        onos.activate();
        Set<Class<?>> before = Set.copyOf(onos.getCodecs());
        assertTrue("ONOS's own FlowRule codec", before.contains(FlowRule.class));
        MetronCodecs.register(onos);
        for (Class<?> t : MetronCodecs.types()) {
            assertNotNull(t.getName(), onos.getCodec(t));
        }
        assertEquals(before.size() + MetronCodecs.types().size(), onos.getCodecs().size());
        MetronCodecs.unregister(onos);
        assertEquals(before, Set.copyOf(onos.getCodecs()));
        assertNull(onos.getCodec(Chain.class));
    }

    @Test
    public void theAppsComponentRegistersThemWhileItRuns() throws Exception {
        OnosServices onos = new OnosServices(w.network, w.switches, w.servers);
        var component = onos.activateMetron();
        assertNotNull(onos.codecs.getCodec(RuleInfo.class));
        assertNotNull(onos.codecs.getCodec(TrafficClassInfo.class));
        OnosServices.deactivate(component);
        assertNull(onos.codecs.getCodec(RuleInfo.class));
        assertNotNull("ONOS's own stay", onos.codecs.getCodec(FlowRule.class));
    }

    @Test
    public void aRuleIsOnosFlowRuleJsonThatOnosCodecReadsBackPlusMetronsFields() {
        for (RuleInfo r : deployedRules()) {
            ObjectNode n = Codecs.json(r, RuleInfo.class);
            FlowRule f = r.rule();
            assertEquals("web", n.get("chain").asText());
            assertEquals(r.role().name().toLowerCase(), n.get("role").asText());
            // ONOS's FlowRule JSON: decimal id, the app's name, device, table, selector.criteria, treatment
            assertEquals(Long.toString(f.id().value()), n.get("id").asText());
            assertEquals(Fixtures.APP.name(), n.get("appId").asText());
            assertEquals(f.deviceId().toString(), n.get("deviceId").asText());
            assertEquals(f.selector().criteria().size(), n.get("selector").get("criteria").size());
            assertEquals(f.treatment().allInstructions().size(), n.get("treatment").get("instructions").size()
                    + n.get("treatment").get("deferred").size());
            assertEquals(r.packets(), n.get("packets").asLong());
            assertTrue(n.get("deviceRead").asBoolean());

            FlowRule back = Codecs.CONTEXT.decode(n, FlowRule.class);
            assertEquals(f.deviceId(), back.deviceId());
            assertEquals(f.priority(), back.priority());
            assertEquals(f.appId(), back.appId());
            assertEquals(f.tableId(), back.tableId());
            assertEquals(f.isPermanent(), back.isPermanent());
            assertEquals(f.selector(), back.selector());
            assertEquals(f.treatment(), back.treatment());
        }
    }

    @Test
    public void aClassEntrysRulesAreTheSameOnosJsonAsTheRuleList() {
        deployedRules();
        Set<String> listed = new TreeSet<>();
        w.manager.rules(null).forEach(r -> listed.add(r.rule().id().toString()));
        int seen = 0;
        for (TrafficClassInfo tc : w.manager.trafficClasses(ChainId.of("web"))) {
            ObjectNode n = Codecs.json(tc, TrafficClassInfo.class);
            for (int e = 0; e < tc.entries().size(); e++) {
                JsonNode rules = n.get("entries").get(e).get("rules");
                assertEquals(tc.entries().get(e).rules().size(), rules.size());
                for (int i = 0; i < rules.size(); i++) {
                    FlowRule f = tc.entries().get(e).rules().get(i);
                    assertEquals(Codecs.json(f, FlowRule.class).put("text", MetronText.rule(f)), rules.get(i));
                    assertTrue(f.toString(), listed.contains(f.id().toString()));
                    // criteria as ONOS names them, with their values: what a client matches on
                    for (JsonNode c : rules.get(i).get("selector").get("criteria")) {
                        Criterion.Type.valueOf(c.get("type").asText());
                        assertTrue(c.toString(), c.size() > 1);
                    }
                    seen++;
                }
            }
        }
        assertTrue("the chain's classes carry switch rules", seen > 0);
    }

    @Test
    public void aPlacementsGroupsCarryTheirTagsThroughTheTagCodec() {
        deployedRules();
        Placement p = w.manager.placement(ChainId.of("web")).orElseThrow();
        ObjectNode n = Codecs.json(p, Placement.class);
        assertEquals("web", n.get("chain").asText());
        assertEquals(p.groups().size(), n.get("groups").size());
        for (int i = 0; i < p.groups().size(); i++) {
            JsonNode g = n.get("groups").get(i);
            assertEquals(p.groups().get(i).groupId(), g.get("id").asText());
            assertEquals(Codecs.json(p.groups().get(i).tag(), org.metron.app.api.Tag.class), g.get("tag"));
            assertEquals(p.server().orElseThrow().toString(), g.get("server").asText());
        }
    }

    /**
     * A chain's load names the groups not measured now and why (a scaled-out group whose server is silent), in
     * the fields the API document gives ChainLoad: the document forbids any other.
     */
    @Test
    public void aChainsLoadNamesItsUnmeasuredGroupsWithWhyInTheDocumentsFields() throws Exception {
        org.metron.app.scaling.ChainLoad load = new org.metron.app.scaling.ChainLoad(ChainId.of("c"), "metron:a",
                true, 1, 1, List.of(new org.metron.app.scaling.GroupLoad("g0", 0, 0.05, java.util.Map.of(0, 10.0),
                "napt", true))).withUnmeasured(java.util.Map.of("g0.1", "its agent is silent"));
        ObjectNode n = Codecs.json(load, org.metron.app.scaling.ChainLoad.class);
        assertEquals("g0", n.get("groups").get(0).get("id").asText());
        assertEquals(1, n.get("unmeasured").size());
        assertEquals("g0.1", n.get("unmeasured").get(0).get("id").asText());
        assertEquals("its agent is silent", n.get("unmeasured").get(0).get("reason").asText());
        JsonNode doc = new com.fasterxml.jackson.databind.ObjectMapper().readTree(getClass().getResourceAsStream(
                "/apidoc/metron-api.json")).get("definitions").get("ChainLoad");
        n.fieldNames().forEachRemaining(f -> assertTrue(f, doc.get("properties").has(f)));
        JsonNode item = doc.get("properties").get("unmeasured").get("items").get("properties");
        n.get("unmeasured").get(0).fieldNames().forEachRemaining(f -> assertTrue(f, item.has(f)));
        // measured everywhere: no such list at all
        assertFalse(Codecs.json(new org.metron.app.scaling.ChainLoad(ChainId.of("c"), "metron:a", true, 1, 1,
                List.of()), org.metron.app.scaling.ChainLoad.class).has("unmeasured"));
    }
}
