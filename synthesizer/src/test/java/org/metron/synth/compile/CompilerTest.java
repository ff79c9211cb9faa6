package org.metron.synth.compile;

import org.junit.Test;
import org.metron.synth.ChainSpec;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RangeMatch;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;
import org.metron.synth.check.EquivalenceChecker;
import org.metron.synth.check.SmallChainsTestAccess;

import java.util.List;
import java.util.stream.Collectors;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertTrue;

/** Split and compile: priorities, partial offload, punts, capacity, range expansion, groups. */
public class CompilerTest {
    private static final String IP = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> ";
    private static final String OUT = " -> Unstrip(14) -> ToDevice(out0);";

    private static CompiledChain compile(String click, TargetProfile t) {
        ChainSpec c = SmallChainsTestAccess.chain("c", click);
        CompiledChain out = Synthesizer.compile(c, t);
        EquivalenceChecker.Report r = new EquivalenceChecker(c, out, 5).run(5000);
        assertEquals(r.toString(), 0, r.mismatches);
        return out;
    }

    private static void descending(CompiledChain c) {
        for (int i = 1; i < c.offloadRules().size(); i++) {
            assertTrue(c.offloadRules().toString(),
                    c.offloadRules().get(i - 1).priority() >= c.offloadRules().get(i).priority());
        }
    }

    @Test
    public void disjointRulesShareAPriorityOverlappingOnesDecrease() {
        CompiledChain c = compile(IP + "IPFilter(allow dst net 10.1.0.0/16, deny dst net 10.2.0.0/16, "
                + "allow dst net 10.0.0.0/8, deny all)" + OUT, TargetProfile.OPENFLOW13);
        descending(c);
        List<OffloadRule> r = c.offloadRules();
        assertEquals(r.get(0).priority(), r.get(1).priority());   // 10.1/16 and 10.2/16 are disjoint
        assertTrue(r.get(1).priority() > r.get(2).priority());     // 10/8 overlaps both
        assertEquals(RuleAction.Type.DROP, r.get(1).action().type());
        assertEquals(RuleAction.Type.TO_EGRESS, r.get(0).action().type());
    }

    /**
     * Open vSwitch in OpenFlow's "normal" fragment mode reads the ports of every fragment as 0, first ones
     * included, so a port rule cannot decide fragments: a punt matching the rule's other fields with ports 0 sits
     * just above it and sends them (and port-0 packets) to software. Found on the real data plane: a
     * 1000-rule firewall let 130 first fragments through that Click drops.
     */
    @Test
    public void fragmentsOfAPortRuleArePuntedOnOpenFlowButDecidedWhereTheDeviceReadsTheirPorts() {
        String fw = IP + "IPFilter(deny src net 10.9.0.0/16, deny udp dst port 1000-1999, allow all)" + OUT;
        CompiledChain of = compile(fw, TargetProfile.OPENFLOW13);
        descending(of);
        List<OffloadRule> punts = of.offloadRules().stream()
                .filter(r -> r.action().type() == RuleAction.Type.TO_SERVER && r.match().l4Dst().isPresent())
                .collect(Collectors.toList());
        assertEquals(of.offloadRules().toString(), 2, punts.size());   // IPv4 and IPv6
        int lowestPunt = Integer.MAX_VALUE;
        for (OffloadRule p : punts) {
            assertEquals(0, p.match().l4Dst().get().lo());
            assertEquals(0, p.match().l4Dst().get().hi());
            assertEquals(17, (int) p.match().ipProto().get());
            lowestPunt = Math.min(lowestPunt, p.priority());
        }
        for (OffloadRule r : of.offloadRules()) {
            if (r.action().type() == RuleAction.Type.DROP && r.match().l4Dst().isPresent()) {
                assertTrue(r + " below its punt", r.priority() < lowestPunt);
            }
            // the source-net rule before it decides fragments in the switch; every rule takes untagged frames only
            assertEquals(r.toString(), RuleMatch.UNTAGGED, (int) r.match().vlan().orElse(RuleMatch.UNTAGGED));
        }
        // a device that reads first fragments' ports (P4 parser) needs no such punt
        assertTrue(compile(fw, TargetProfile.P4_TAGGER).offloadRules().stream()
                .noneMatch(r -> r.action().type() == RuleAction.Type.TO_SERVER && r.match().l4Dst().isPresent()));
    }

    @Test
    public void everyRuleNamesTheFilterEntryItWasCompiledFrom() {
        // class 0 (allowed, NAPT) has two entries, one per allowed protocol; the drop class has its own entries
        CompiledChain c = compile(IP + "IPFilter(allow udp dst port 5000, allow tcp dst port 80, deny all) -> "
                + "IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1, drop)" + OUT, TargetProfile.OPENFLOW13);
        TrafficClass allowed = c.classes().stream().filter(t -> !t.drops()).findFirst().orElseThrow();
        assertEquals(allowed.filters().toString(), 2, allowed.filters().size());
        int sourced = 0;
        for (OffloadRule r : c.offloadRules()) {
            if (r.sourceClass() < 0) {
                // a punt guarding the port entries (fragments, whose ports OVS reads as 0) is no entry's own rule
                assertTrue(r.toString(), r.match().l4Dst().map(p -> p.lo() == 0 && p.hi() == 0).orElse(true));
                continue;
            }
            sourced++;
            TrafficClass from = c.classes().get(r.sourceClass());
            assertTrue(r.toString(), r.sourceEntry() < from.filters().size());
            // an entry's own rules do what its class does and match what the entry names
            assertEquals(r.toString(), from.drops() ? RuleAction.Type.DROP : RuleAction.Type.TO_SERVER,
                    r.action().type());
            String entry = from.filters().get(r.sourceEntry());
            assertEquals(r + " from " + entry, entry.contains("dst port"), r.match().l4Dst().isPresent());
            r.match().l4Dst().ifPresent(p -> assertTrue(r + " from " + entry, entry.contains("dst port " + p.lo())));
        }
        assertTrue(sourced > 0);
        for (int e = 0; e < 2; e++) {
            int entry = e;
            assertTrue("entry " + e + " of the allowed class became a rule to its server", c.offloadRules().stream()
                    .anyMatch(r -> r.compiledFrom(allowed.id(), entry)
                            && r.action().type() == RuleAction.Type.TO_SERVER));
        }
    }

    @Test
    public void ruleTheDeviceCannotHoldBecomesAPuntAndLaterRulesStayOffloaded() {
        // OpenFlow 1.3 cannot match TCP flags: the SYN rule is punted, the rule after it is still offloaded
        CompiledChain c = compile(IP + "IPFilter(deny tcp opt syn and dst port 22, allow dst net 10.0.0.0/8, "
                + "deny all)" + OUT, TargetProfile.OPENFLOW13);
        descending(c);
        List<OffloadRule> punts = c.offloadRules().stream()
                .filter(r -> r.action().classId() == TrafficClass.UNCLASSIFIED).collect(Collectors.toList());
        assertFalse(punts.isEmpty());
        assertTrue(punts.get(0).match().l4Dst().isPresent());      // the punt keeps what the switch can match
        assertTrue(c.offloadRules().stream().anyMatch(r -> r.action().type() == RuleAction.Type.TO_EGRESS
                && r.match().ipDst().isPresent()));
        assertTrue(c.groups().stream().anyMatch(ClassGroup::classifies));
        // the P4 tagging pipeline matches TCP flags: nothing to punt
        CompiledChain p4 = compile(IP + "IPFilter(deny tcp opt syn and dst port 22, allow dst net 10.0.0.0/8, "
                + "deny all)" + OUT, TargetProfile.P4_TAGGER);
        assertTrue(p4.offloadRules().stream().noneMatch(r -> r.action().classId() == TrafficClass.UNCLASSIFIED));
    }

    @Test
    public void capacityStopsOffloadWithACatchAllPunt() {
        String fw = IP + "IPFilter(allow dst net 10.1.0.0/16, allow dst net 10.2.0.0/16, allow dst net "
                + "10.3.0.0/16, allow dst net 10.4.0.0/16, deny all)" + OUT;
        CompiledChain c = compile(fw, TargetProfile.OPENFLOW13.withCapacity(3));
        assertTrue(c.offloadRules().size() <= 3);
        OffloadRule last = c.offloadRules().get(c.offloadRules().size() - 1);
        assertEquals(TrafficClass.UNCLASSIFIED, last.action().classId());
        assertTrue(last.match().fields().isEmpty());
        assertTrue(c.stats().rulesSoftware() > 0);
        CompiledChain none = compile(fw, TargetProfile.NONE);
        assertTrue(none.offloadRules().isEmpty());
        assertEquals(none.stats().entries(), none.stats().rulesSoftware());
    }

    @Test
    public void portRangesBecomePrefixesOnlyWhereTheTargetNeedsThem() {
        String fw = IP + "IPFilter(allow udp dst port 1000-1999, deny all)" + OUT;
        List<RangeMatch> of = compile(fw, TargetProfile.OPENFLOW13).offloadRules().stream()
                .filter(r -> r.match().l4Dst().isPresent() && r.action().type() != RuleAction.Type.TO_SERVER)
                .map(r -> r.match().l4Dst().get())
                .collect(Collectors.toList());
        assertTrue(of.size() > 2);
        assertTrue(of.stream().allMatch(RangeMatch::isMaskable));
        assertEquals(1000, of.stream().mapToInt(RangeMatch::lo).min().getAsInt());
        assertEquals(1999, of.stream().mapToInt(RangeMatch::hi).max().getAsInt());
        List<RangeMatch> p4 = compile(fw, TargetProfile.P4_TAGGER).offloadRules().stream()
                .filter(r -> r.match().l4Dst().isPresent()).map(r -> r.match().l4Dst().get())
                .collect(Collectors.toList());
        assertEquals(List.of(RangeMatch.of(1000, 1999, 16), RangeMatch.of(1000, 1999, 16)), p4);  // v4 and v6
    }

    @Test
    public void classesWithTheSameStatefulOperationShareAGroup() {
        String napt = "FromDevice(in0) -> Strip(14) -> CheckIPHeader -> k :: IPClassifier(dst net 10.1.0.0/16, "
                + "dst net 10.2.0.0/16, -);\n"
                + "k[0] -> a :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1) -> Unstrip(14) -> ToDevice(out0);\n"
                + "k[1] -> b :: IPRewriter(pattern 192.0.2.1 1024-65535 - - 0 1) -> DecIPTTL -> Unstrip(14) -> "
                + "ToDevice(out0);\n"
                + "k[2] -> c :: IPRewriter(pattern 192.0.2.9 1024-65535 - - 0 1) -> Unstrip(14) -> ToDevice(out0);";
        CompiledChain c = compile(napt, TargetProfile.P4_TAGGER);
        assertEquals(2, c.groups().size());
        ClassGroup shared = c.groups().stream().filter(g -> g.classIds().size() == 2).findFirst().get();
        assertTrue(shared.statefulKey().contains("192.0.2.1"));
        assertTrue(shared.clickConfig(), shared.clickConfig().contains("tag :: Classifier("));
        assertTrue(shared.clickConfig(), shared.clickConfig().contains("DecIPTTL"));
        for (ClassGroup g : c.groups()) {
            assertFalse(g.classifies());
            for (int id : g.classIds()) {
                assertEquals(g.statefulKey(), c.classes().get(id).statefulKey());
            }
        }
    }

    @Test
    public void classesDisjointFromEveryEarlierPuntKeepTheirOwnGroup() {
        // OpenFlow 1.3 cannot match the TTL: entry 0 is punted as "src net 10/8"; the address rewrite of
        // 172.16/12 comes later but is disjoint from that punt, so no punted packet is ever of its class
        CompiledChain c = compile(IP + "c :: IPClassifier(src net 10.0.0.0/8 and ip ttl < 5,\n"
                + "  src net 172.16.0.0/12, -);\nc[0] -> Discard;\n"
                + "c[1] -> rw :: IPAddrRewriter(pattern 203.0.113.1 - - - 0 1)" + OUT + "\nc[2]" + OUT,
                TargetProfile.OPENFLOW13);
        ClassGroup classifying = c.groups().stream().filter(ClassGroup::classifies).findFirst().orElseThrow();
        ClassGroup own = c.groups().stream().filter(g -> !g.classifies()).findFirst().orElseThrow();
        assertTrue(own.statefulKey(), own.statefulKey().contains("203.0.113.1"));
        assertTrue(classifying.clickConfig(), !classifying.clickConfig().contains("203.0.113.1"));
        // its entry is still in the software classifier (first-match order) but leads nowhere
        assertTrue(classifying.clickConfig(), classifying.clickConfig().contains("src net 172.16.0.0/12"));
        assertTrue(classifying.clickConfig(), classifying.clickConfig().contains("-> Discard;"));
    }
}
