package org.metron.synth.check;

import org.metron.synth.ChainSpec;
import org.metron.synth.CompiledChain;
import org.metron.synth.TargetProfile;
import org.metron.synth.core.ChainModel;
import org.metron.synth.core.FlowState;
import org.metron.synth.core.Synthesis;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;
import org.metron.synth.packet.PacketText;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Differential check of a synthesis: the reference interpreter runs the original chain and the evaluator runs
 * the emitted rules + group configs on the same packets; verdict, every header field, allocated ports and the
 * stateful operation must agree. The first mismatch is shrunk to a minimal packet and reported with both
 * traces.
 * <p>
 * For a chain with a reply ingress every forward packet is followed by a reply at that ingress, run by each
 * side against the flow tables its own forward run left (reference: one per rewriter element; synthesized:
 * the group's SynthRewriter): mostly the mirror of the forward packet's egress headers (it finds the
 * mapping), sometimes that mirror with one field moved to a boundary, sometimes a packet aimed at the reply
 * entries. A reply's fate depends on state, so this is the only way to check it.
 */
public final class EquivalenceChecker {
    /** Result of a check. */
    public static final class Report {
        public final long packets;
        public final long mismatches;
        public final long dropped;
        public final long ipv6;
        /** Packets the offload device sent to the server unclassified (software classifier). */
        public final long punted;
        /** Reply packets run after forward ones (0 without a reply ingress). */
        public final long replies;
        /** Replies the reference delivered (found their mapping and passed the reply path). */
        public final long repliesDelivered;
        /** Minimal reproducing packet, both outcomes and traces; null if none. */
        public final String firstMismatch;
        /** Frames without a valid IP header that the chain does not reject at a CheckIPHeader: not compared. */
        public final long outsideModel;

        Report(long packets, long mismatches, long dropped, long ipv6, long punted, long replies,
               long repliesDelivered, String firstMismatch, long outsideModel) {
            this.outsideModel = outsideModel;
            this.replies = replies;
            this.repliesDelivered = repliesDelivered;
            this.punted = punted;
            this.packets = packets;
            this.mismatches = mismatches;
            this.dropped = dropped;
            this.ipv6 = ipv6;
            this.firstMismatch = firstMismatch;
        }

        @Override
        public String toString() {
            return packets + " packets (" + ipv6 + " IPv6, " + dropped + " dropped, " + punted
                    + " classified in software)"
                    + (replies == 0 ? "" : ", " + replies + " replies (" + repliesDelivered + " delivered)")
                    + (outsideModel == 0 ? "" : ", " + outsideModel + " odd frames the chain does not reject "
                    + "(outside the model)")
                    + ", " + mismatches + " mismatches"
                    + (firstMismatch == null ? "" : "\n" + firstMismatch);
        }
    }

    private final ReferenceInterpreter ref;
    private final SynthesizedEvaluator syn;
    private final PacketGenerator gen;
    /** Packets aimed at the reply entries; null without a reply ingress. */
    private final PacketGenerator replyGen;
    private final SplittableRandom choices;
    /** What the chain's black boxes do, per packet (the same function on both sides). */
    private final OpaqueBoxes boxes;

    /**
     * Prepares a check of one chain compiled for one target.
     *
     * @param chain  the chain
     * @param out    its compiled form (from {@link org.metron.synth.Synthesizer#compile})
     * @param seed   packet seed
     */
    public EquivalenceChecker(ChainSpec chain, CompiledChain out, long seed) {
        ChainModel model = new ChainModel(chain);
        this.ref = new ReferenceInterpreter(model);
        this.syn = new SynthesizedEvaluator(out);
        Synthesis s = Synthesis.of(model);
        this.gen = new PacketGenerator(seed, s.entries, dpiLiterals(chain));
        this.replyGen = model.ingresses() > 1 ? new PacketGenerator(seed ^ 0x7e91, s.reply.cubes, List.of()) : null;
        this.choices = new SplittableRandom(seed ^ 0x5eed);
        this.boxes = new OpaqueBoxes(model, s, seed ^ 0xb0c5);
    }

    /** Convenience: compile for a target and check. */
    public static Report check(ChainSpec chain, TargetProfile target, long packets, long seed) {
        CompiledChain out = org.metron.synth.Synthesizer.compile(chain, target);
        return new EquivalenceChecker(chain, out, seed).run(packets);
    }

    /** The literals of the chain's DPI elements, for the generator to plant in payloads. */
    static List<String> dpiLiterals(ChainSpec chain) {
        List<String> out = new ArrayList<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"([^\"\\\\]{2,64})\"").matcher("");
        chain.nfs().forEach(nf -> {
            if (nf.click().contains("DPI(")) {
                m.reset(nf.click());
                while (m.find()) {
                    out.add(m.group(1));
                }
            }
        });
        return out;
    }

    /** Runs n packets. */
    public Report run(long n) {
        long mismatches = 0;
        long punted0 = syn.punted();
        long dropped = 0;
        long v6 = 0;
        long replies = 0;
        long delivered = 0;
        long outside = 0;
        String first = null;
        for (long i = 0; i < n; i++) {
            Packet p = gen.next();
            long choice = choices.nextLong();
            FlowState refState = replyGen == null ? null : new FlowState();
            FlowState synState = replyGen == null ? null : new FlowState();
            Outcome a = reference(p, choice, false, refState);
            if (a == null) {
                outside++;
                continue;
            }
            Outcome b = syn.run(p, choice, false, 0, synState, boxes.forPacket(choice));
            if (p.isIp6()) {
                v6++;
            }
            if (a.egress < 0) {
                dropped++;
            }
            if (Outcome.diff(p, a, b) != null) {
                mismatches++;
                if (first == null) {
                    first = explain(shrink(p, choice), choice);
                }
                continue;
            }
            if (replyGen == null) {
                continue;
            }
            Packet q = replyTo(a);
            Outcome ra = ref.run(q, choice, false, 1, refState);
            Outcome rb = syn.run(q, choice, false, 1, synState);
            replies++;
            if (ra.egress >= 0) {
                delivered++;
            }
            if (Outcome.diff(q, ra, rb) != null) {
                mismatches++;
                if (first == null) {
                    first = explainReply(p, q, choice);
                }
            }
        }
        return new Report(n, mismatches, dropped, v6, syn.punted() - punted0, replies, delivered, first, outside);
    }

    /** The reference's forward outcome, or null if the packet is outside the model ({@link Outcome#modelled}). */
    private Outcome reference(Packet p, long choice, boolean tracing, FlowState state) {
        try {
            Outcome a = ref.run(p, choice, tracing, 0, state, boxes.forPacket(choice));
            return a.modelled(p) ? a : null;
        } catch (org.metron.synth.packet.OutsideModelException e) {
            return null;
        }
    }

    /**
     * A reply for a forward outcome: the mirror of its egress headers (half the time exactly, a quarter with
     * one field moved to a boundary), or, for dropped packets and the last quarter, a packet aimed at the
     * reply entries.
     */
    private Packet replyTo(Outcome fwd) {
        int mode = replyGen.nextInt(4);
        if (fwd.egress < 0 || mode == 3) {
            return replyGen.next();
        }
        long[] v = fwd.packet.v.clone();
        swap(v, Field.IP4_SRC, Field.IP4_DST);
        swap(v, Field.IP6_SRC_HI, Field.IP6_DST_HI);
        swap(v, Field.IP6_SRC_LO, Field.IP6_DST_LO);
        swap(v, Field.L4_SRC, Field.L4_DST);
        Packet mirror = PacketGenerator.wellFormed(v, fwd.packet.payload);
        return mode == 2 ? replyGen.nudge(mirror) : replyGen.freshen(mirror);
    }

    private static void swap(long[] v, Field a, Field b) {
        long t = v[a.ordinal()];
        v[a.ordinal()] = v[b.ordinal()];
        v[b.ordinal()] = t;
    }

    private String explainReply(Packet fwd, Packet reply, long choice) {
        FlowState rs = new FlowState();
        FlowState ss = new FlowState();
        Outcome fa = ref.run(fwd, choice, true, 0, rs);
        Outcome fb = syn.run(fwd, choice, true, 0, ss);
        Outcome a = ref.run(reply, choice, true, 1, rs);
        Outcome b = syn.run(reply, choice, true, 1, ss);
        return "MISMATCH on reply: " + PacketText.format(reply) + " after forward packet " + PacketText.format(fwd)
                + " (choice " + choice + ")\n  " + Outcome.diff(reply, a, b)
                + "\n  forward traces: reference " + fa.trace + ", synthesized " + fb.trace
                + "\n  reference reply trace: " + a.trace + " -> "
                + (a.egress < 0 ? "drop by " + a.droppedBy : "egress " + a.egress + " " + a.stateful)
                + "\n  synthesized reply trace: " + b.trace + " -> "
                + (b.egress < 0 ? "drop by " + b.droppedBy : "egress " + b.egress + " " + b.stateful);
    }

    /** Checks one given packet; null if equivalent, else the explanation. */
    public String check(Packet p, long choice) {
        String d = Outcome.diff(p, ref.run(p, choice, false, 0, null, boxes.forPacket(choice)),
                syn.run(p, choice, false, 0, null, boxes.forPacket(choice)));
        return d == null ? null : explain(p, choice);
    }

    /** Greedily simplifies fields (to 0, to small values) while the mismatch persists. */
    private Packet shrink(Packet p, long choice) {
        Packet cur = p;
        boolean changed = true;
        while (changed) {
            changed = false;
            for (Field f : Field.values()) {
                if (f == Field.ETH_TYPE) {
                    continue;
                }
                for (long cand : new long[] {0, 1, cur.get(f) >>> 1}) {
                    if (Long.compareUnsigned(cand, cur.get(f)) >= 0) {
                        continue;
                    }
                    long[] v = cur.v.clone();
                    v[f.ordinal()] = cand;
                    Packet q = PacketGenerator.wellFormed(v, cur.payload, cur.check);
                    Outcome a = q.equals(cur) ? null : reference(q, choice, false, null);
                    if (a != null && Outcome.diff(q, a, syn.run(q, choice, false, 0, null, boxes.forPacket(choice)))
                            != null) {
                        cur = q;
                        changed = true;
                        break;
                    }
                }
            }
        }
        return cur;
    }

    private String explain(Packet p, long choice) {
        Outcome a = ref.run(p, choice, true, 0, null, boxes.forPacket(choice));
        Outcome b = syn.run(p, choice, true, 0, null, boxes.forPacket(choice));
        return "MISMATCH on packet: " + PacketText.format(p) + " (choice " + choice + ")\n  "
                + Outcome.diff(p, a, b) + "\n  reference trace: " + a.trace + " -> "
                + (a.egress < 0 ? "drop by " + a.droppedBy : "egress " + a.egress + " " + a.stateful)
                + "\n  synthesized trace: " + b.trace + " -> "
                + (b.egress < 0 ? "drop by " + b.droppedBy : "egress " + b.egress + " " + b.stateful);
    }
}
