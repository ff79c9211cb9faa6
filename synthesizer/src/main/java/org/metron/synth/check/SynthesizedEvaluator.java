package org.metron.synth.check;

import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.HeaderWrite;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.TrafficClass;
import org.metron.synth.core.BlackBoxes;
import org.metron.synth.core.FlowState;
import org.metron.synth.core.NfGraph;
import org.metron.synth.core.Run;
import org.metron.synth.core.SynthOps;
import org.metron.synth.elements.Device;
import org.metron.synth.elements.Element;
import org.metron.synth.filter.RuleIndex;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;
import org.metron.synth.hs.RuleSpace;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs a packet through what the synthesizer emitted: the offload device (rules in priority order, read back
 * from the {@link RuleMatch} objects, matched against the packet as the target's parser reads it: {@link
 * DeviceView}) and then, for TO_SERVER, the group's Click config parsed and run with
 * the same element semantics as the reference. It never looks at the synthesizer's internal classes.
 */
public final class SynthesizedEvaluator {
    private static final long TAG_OUI = 0x024dL << 32;

    private final CompiledChain out;
    /** Device rules by decreasing priority (stable), as the device evaluates them. */
    private final List<OffloadRule> ordered;
    private final RuleIndex rules;
    /** The same for the reply ingress's rules. */
    private final List<OffloadRule> replyOrdered;
    private final RuleIndex replyRules;
    private final Map<Integer, ClassGroup> groupOfClass = new HashMap<>();
    private final Map<Integer, NfGraph> graphs = new HashMap<>();
    private ClassGroup classifying;
    /** Packets the device sent to software unclassified (punts and the catch-all), since creation. */
    private long punted;

    public SynthesizedEvaluator(CompiledChain out) {
        this.out = out;
        ordered = byPriority(out.offloadRules());
        rules = index(ordered);
        replyOrdered = byPriority(out.replyRules());
        replyRules = index(replyOrdered);
        for (ClassGroup g : out.groups()) {
            g.classIds().forEach(c -> groupOfClass.put(c, g));
            if (g.classifies()) {
                classifying = g;
            }
            graphs.put(g.id(), new NfGraph("group" + g.id(), g.clickConfig()));
        }
    }

    private static List<OffloadRule> byPriority(List<OffloadRule> rules) {
        List<OffloadRule> o = new ArrayList<>(rules);
        o.sort((a, b) -> Integer.compare(b.priority(), a.priority()));
        return o;
    }

    private static RuleIndex index(List<OffloadRule> ordered) {
        List<long[][]> sets = new ArrayList<>();
        for (OffloadRule r : ordered) {
            sets.add(RuleSpace.sets(r.match()));
        }
        return new RuleIndex(sets);
    }

    /** Runs one forward packet on fresh state (the input is not modified). */
    public Outcome run(Packet input, long choice, boolean tracing) {
        return run(input, choice, tracing, 0, null);
    }

    /**
     * Runs one packet entering at an ingress (0 forward: the offload rules; 1 replies: the reply rules)
     * against flow tables (null = fresh, unrecorded).
     */
    public Outcome run(Packet input, long choice, boolean tracing, int ingress, FlowState state) {
        return run(input, choice, tracing, ingress, state, BlackBoxes.IDENTITY);
    }

    /** As {@link #run(Packet, long, boolean, int, FlowState)}, with what the groups' BlackBoxNF elements do. */
    public Outcome run(Packet input, long choice, boolean tracing, int ingress, FlowState state, BlackBoxes boxes) {
        Packet p = input.copy();
        Run run = new Run(choice, tracing);
        run.boxes = boxes;
        run.state = state;
        RuleIndex index = ingress == 0 ? rules : replyRules;
        List<OffloadRule> rulesInOrder = ingress == 0 ? ordered : replyOrdered;
        long[] cand = index.scratch();
        index.candidates(DeviceView.of(p, out.target()), cand);
        int r = RuleIndex.next(cand, 0);
        ClassGroup g;
        int classBits;
        if (r < 0) {
            if (classifying == null || !rulesInOrder.isEmpty()) {
                return new Outcome(-1, p, new EnumMap<>(Field.class), "", "no offload rule matched", run.trace);
            }
            g = classifying;
            classBits = ingress == 0 ? TrafficClass.UNCLASSIFIED : TrafficClass.REPLY_UNCLASSIFIED;
        } else {
            OffloadRule rule = rulesInOrder.get(r);
            if (run.trace != null) {
                run.trace("device rule " + r + ": " + rule);
            }
            RuleAction a = rule.action();
            switch (a.type()) {
                case DROP:
                    return new Outcome(-1, p, new EnumMap<>(Field.class), "", "device rule " + r, run.trace);
                case TO_EGRESS:
                    for (HeaderWrite w : a.writes()) {
                        write(p, w);
                    }
                    if (a.decTtl()) {
                        if (p.get(Field.TTL) <= 1) {
                            // OpenFlow dec_nw_ttl does not forward packets whose TTL would expire
                            return new Outcome(-1, p, new EnumMap<>(Field.class), "", "device dec_ttl expired",
                                    run.trace);
                        }
                        p.set(Field.TTL, p.get(Field.TTL) - 1);
                    }
                    return new Outcome(a.egress(), p, new EnumMap<>(Field.class), "", null, run.trace);
                default:
                    classBits = a.classId();
                    g = classBits == TrafficClass.UNCLASSIFIED || classBits == TrafficClass.REPLY_UNCLASSIFIED
                            ? classifying : groupOfClass.get(classBits);
                    if (g == null) {
                        return new Outcome(-1, p, new EnumMap<>(Field.class), "", "TO_SERVER(" + classBits
                                + ") names no group", run.trace);
                    }
            }
        }
        if (classBits == TrafficClass.UNCLASSIFIED || classBits == TrafficClass.REPLY_UNCLASSIFIED) {
            punted++;
        }
        p.set(Field.ETH_DST, TAG_OUI | ((long) (g.id() + 1) << 16) | classBits);
        NfGraph graph = graphs.get(g.id());
        Device in = graph.source("input");
        GraphRunner.Stop stop = GraphRunner.run(graph, in, p, run);
        Outcome o = stop.sink == null ? new Outcome(-1, p, new EnumMap<>(run.allocated), "", run.droppedBy, run.trace)
                : new Outcome(stop.port, p, new EnumMap<>(run.allocated), SynthOps.canonical(run.steps), null,
                run.trace);
        o.boxInputs = run.boxInputs;
        return o;
    }

    private static void write(Packet p, HeaderWrite w) {
        switch (w.field()) {
            case ETH_SRC:
            case ETH_DST: {
                long v = 0;
                for (String b : w.value().split(":")) {
                    v = (v << 8) | Long.parseLong(b, 16);
                }
                p.set(w.field() == org.metron.synth.MatchField.ETH_SRC ? Field.ETH_SRC : Field.ETH_DST, v);
                break;
            }
            case VLAN_ID:
                p.set(Field.VLAN, Long.parseLong(w.value()));
                break;
            default:
                throw new IllegalStateException("device write of " + w.field() + " not modelled");
        }
    }

    /** Packets run so far that the device could not classify itself. */
    public long punted() {
        return punted;
    }

    /** Elements of a group graph, for tests. */
    Map<String, Element> groupElements(int group) {
        return graphs.get(group).elements();
    }
}
