package org.metron.synth.check;

import org.metron.synth.ChainSpec;
import org.metron.synth.core.ChainModel;
import org.metron.synth.core.FlowState;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.FrameCodec;
import org.metron.synth.packet.FrameRewrite;
import org.metron.synth.packet.HeaderCheck;
import org.metron.synth.packet.OutsideModelException;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * What the original chain (the {@link ReferenceInterpreter}, NF by NF with Click's semantics) does with real
 * frames: for each input frame the output frames it may send, byte for byte, at which egress. A pool choice
 * (load-balancer mapping) gives one alternative per choice; a port a rewriter allocates is a {@link
 * FrameRewrite.Free} field of the frame, with the checksums that cover it.
 */
public final class FrameReference {
    /** Largest number of pool choices enumerated per frame. */
    static final int MAX_CHOICES = 64;

    /** What may leave the chain for one input frame. */
    public static final class Expectation {
        /** Compared as the chain's reference says. */
        public static final String MODELLED = "modelled";
        /**
         * A frame with a bad IPv4 header checksum: dropped by the chain's CheckIPHeader, but a switch does not
         * verify checksums, so an offloaded class forwards it as if it were right (docs/contracts.md).
         */
        public static final String CHECKSUM_EXCEPTION = "checksum-exception";
        /** No reference outcome (see {@link OutsideModelException}, {@link Outcome#modelled}): not compared. */
        public static final String OUTSIDE = "outside";

        public final int id;
        public final FrameGenerator.Kind kind;
        public final String status;
        /** Why the reference drops it (empty if it sends it), or why it is outside the model. */
        public final String why;
        /** Output frames it may send: any one of them, once (empty = dropped). */
        public final List<Output> outputs;
        /** The input's flow (family, addresses, protocol, ports) when an output has allocated fields or a choice. */
        public final String flow;

        Expectation(int id, FrameGenerator.Kind kind, String status, String why, List<Output> outputs, String flow) {
            this.id = id;
            this.kind = kind;
            this.status = status;
            this.why = why;
            this.outputs = outputs;
            this.flow = flow;
        }

        /** As JSON values (output bytes in hex, allocated fields as [offset, bytes, lo, hi, [checksums]]). */
        public Map<String, Object> json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", id);
            m.put("kind", kind == null ? null : kind.name());
            m.put("status", status);
            m.put("why", why);
            List<Object> outs = new ArrayList<>();
            for (Output x : outputs) {
                Map<String, Object> o = new LinkedHashMap<>();
                o.put("egress", x.egress);
                o.put("bytes", CaptureComparison.hex(x.bytes));
                List<Object> free = new ArrayList<>();
                x.free.forEach(f -> free.add(List.of(f.offset, f.bytes, f.lo, f.hi,
                        Arrays.stream(f.checksums).boxed().collect(Collectors.toList()), f.udpChecksum)));
                o.put("allocated", free);
                outs.add(o);
            }
            m.put("outputs", outs);
            m.put("flow", flow);
            return m;
        }

        /** Reads what {@link #json()} wrote. */
        @SuppressWarnings("unchecked")
        public static Expectation of(Map<String, Object> m) {
            List<Output> outs = new ArrayList<>();
            for (Object x : (List<Object>) m.get("outputs")) {
                Map<String, Object> o = (Map<String, Object>) x;
                List<FrameRewrite.Free> free = new ArrayList<>();
                for (Object a : (List<Object>) o.get("allocated")) {
                    List<Object> f = (List<Object>) a;
                    free.add(new FrameRewrite.Free(num(f.get(0)), num(f.get(1)), (Long) f.get(2), (Long) f.get(3),
                            ((List<Object>) f.get(4)).stream().mapToInt(FrameReference::num).toArray(),
                            num(f.get(5))));
                }
                outs.add(new Output(num(o.get("egress")), unhex((String) o.get("bytes")), free));
            }
            Object kind = m.get("kind");
            return new Expectation(num(m.get("id")), kind == null ? null : FrameGenerator.Kind.valueOf((String) kind),
                    (String) m.get("status"), (String) m.get("why"), outs, (String) m.get("flow"));
        }
    }

    private static int num(Object o) {
        return ((Long) o).intValue();
    }

    private static byte[] unhex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    /** One output frame the chain may send. */
    public static final class Output {
        public final int egress;
        public final byte[] bytes;
        public final List<FrameRewrite.Free> free;

        Output(int egress, byte[] bytes, List<FrameRewrite.Free> free) {
            this.egress = egress;
            this.bytes = bytes;
            this.free = free;
        }

        boolean sameAs(Output o) {
            return egress == o.egress && Arrays.equals(bytes, o.bytes);
        }
    }

    private final ReferenceInterpreter ref;
    private final Map<Integer, Long> egressMacs;

    /**
     * @param egressMacs per egress index, the destination MAC frames leave with there (the egress host's, which
     *                   the last switch writes); an egress without one keeps what the chain wrote
     */
    public FrameReference(ChainSpec chain, Map<Integer, Long> egressMacs) {
        this.ref = new ReferenceInterpreter(new ChainModel(chain));
        this.egressMacs = egressMacs;
    }

    /** The expectation for one input frame entering at the forward ingress. */
    public Expectation expect(int id, FrameGenerator.Kind kind, byte[] frame) {
        try {
            FrameCodec.Decoded d = FrameCodec.decode(frame);
            Outcome first = ref.run(d.packet, 0, false);
            if (first.egress < 0 && first.droppedBy == null) {
                first = ref.run(d.packet, 0, true);  // classifiers name the rule that dropped it when tracing
            }
            if (!first.modelled(d.packet)) {
                return outside(id, kind, notRejected(d.packet));
            }
            if (d.packet.check == HeaderCheck.BAD_CHECKSUM) {
                Packet fixed = new Packet(d.packet.v, d.packet.payload, HeaderCheck.VALID);
                List<Output> alt = outputs(frame, d, fixed);
                return new Expectation(id, kind, Expectation.CHECKSUM_EXCEPTION, first.droppedBy, alt, flow(d, alt));
            }
            List<Output> out = outputs(frame, d, d.packet);
            return new Expectation(id, kind, Expectation.MODELLED, out.isEmpty() ? first.droppedBy : "", out,
                    flow(d, out));
        } catch (OutsideModelException e) {
            return outside(id, kind, e.getMessage());
        }
    }

    /**
     * The expectation for a reply frame entering at the reply ingress. For a {@link FrameGenerator.Kind#REPLY}
     * to forward frame {@code forward} (which arrived as {@code seen}), the reference runs that forward frame
     * with the pool choice the data plane made (the one whose output {@code seen} is), keeps its flow tables,
     * and runs the reply as the mirror of its own output (its allocated port where the data plane allocated
     * another): what the reply path restores does not depend on the port. Other replies run on empty tables.
     */
    public Expectation expectReply(int id, FrameGenerator.Kind kind, byte[] reply, byte[] forward, byte[] seen,
                                   int seenEgress) {
        try {
            FrameCodec.Decoded r = FrameCodec.decode(reply);
            FlowState state = new FlowState();
            Packet in = r.packet;
            if (forward != null) {
                FrameCodec.Decoded f = FrameCodec.decode(forward);
                state = null;
                long span = 1;
                for (long c = 0; c < span && c < MAX_CHOICES && state == null; c++) {
                    FlowState st = new FlowState();
                    Outcome o = ref.run(f.packet, c, false, 0, st);
                    span = o.span;
                    if (o.egress >= 0 && CaptureComparison.matchOutput(output(forward, f, o), seenEgress, seen) == null) {
                        state = st;
                        in = mirrored(r.packet, o.packet);
                    }
                }
                if (state == null) {
                    return outside(id, kind, "its forward frame " + (id - FrameGenerator.REPLY_BASE)
                            + " left as no choice of the reference");
                }
            }
            Outcome o = ref.run(in, 0, false, 1, state);
            if (o.egress < 0 && o.droppedBy == null) {
                o = ref.run(in, 0, true, 1, forward == null ? new FlowState() : state);
            }
            if (!o.modelled(in)) {
                return outside(id, kind, notRejected(in));
            }
            List<Output> out = o.egress < 0 ? List.of() : List.of(new Output(o.egress,
                    FrameRewrite.rewrite(reply, r, o.packet, egressMacs.get(o.egress)), List.of()));
            return new Expectation(id, kind, Expectation.MODELLED, out.isEmpty() ? o.droppedBy : "", out, "");
        } catch (OutsideModelException e) {
            return outside(id, kind, e.getMessage());
        }
    }

    private static Expectation outside(int id, FrameGenerator.Kind kind, String why) {
        return new Expectation(id, kind, Expectation.OUTSIDE, why, List.of(), "");
    }

    private static String notRejected(Packet p) {
        return "the chain does not reject this " + p.check + " frame at a CheckIPHeader";
    }

    /** The reply with its addresses and ports those of the mirror of the reference's forward output. */
    private static Packet mirrored(Packet reply, Packet fwdOut) {
        Packet m = reply.copy();
        m.set(Field.IP4_SRC, fwdOut.get(Field.IP4_DST));
        m.set(Field.IP4_DST, fwdOut.get(Field.IP4_SRC));
        m.set(Field.IP6_SRC_HI, fwdOut.get(Field.IP6_DST_HI));
        m.set(Field.IP6_SRC_LO, fwdOut.get(Field.IP6_DST_LO));
        m.set(Field.IP6_DST_HI, fwdOut.get(Field.IP6_SRC_HI));
        m.set(Field.IP6_DST_LO, fwdOut.get(Field.IP6_SRC_LO));
        m.set(Field.L4_SRC, fwdOut.get(Field.L4_DST));
        m.set(Field.L4_DST, fwdOut.get(Field.L4_SRC));
        return m;
    }

    /** Every distinct output over the pool choices (none if the chain drops the packet). */
    private List<Output> outputs(byte[] frame, FrameCodec.Decoded d, Packet p) {
        FrameCodec.Decoded dp = new FrameCodec.Decoded(p, d.layout);
        List<Output> out = new ArrayList<>();
        long span = 1;
        for (long c = 0; c < span && c < MAX_CHOICES; c++) {
            Outcome o = ref.run(p, c, false);
            span = o.span;
            if (o.egress < 0) {
                continue;
            }
            Output x = output(frame, dp, o);
            if (out.stream().noneMatch(x::sameAs)) {
                out.add(x);
            }
        }
        return out;
    }

    /** The output frame of one outcome, its allocated fields free. */
    private Output output(byte[] frame, FrameCodec.Decoded d, Outcome o) {
        List<FrameRewrite.Free> free = new ArrayList<>();
        for (Map.Entry<Field, String> a : o.allocated.entrySet()) {
            String[] r = a.getValue().split("-");
            FrameRewrite.Free f = FrameRewrite.free(frame, d, a.getKey(), Long.parseLong(r[0]), Long.parseLong(r[1]));
            if (f != null) {
                free.add(f);
            }
        }
        return new Output(o.egress, FrameRewrite.rewrite(frame, d, o.packet, egressMacs.get(o.egress)), free);
    }

    /** The input flow's key when its outputs depend on per-flow state (an allocation or a pool choice). */
    private static String flow(FrameCodec.Decoded d, List<Output> out) {
        boolean state = out.size() > 1 || out.stream().anyMatch(o -> !o.free.isEmpty());
        if (!state) {
            return "";
        }
        Packet p = d.packet;
        return tuple(p);
    }

    /** Family, addresses, protocol and ports of a packet. */
    static String tuple(Packet p) {
        return org.metron.synth.packet.PacketText.addr(p, true) + ":" + p.get(Field.L4_SRC) + ">"
                + org.metron.synth.packet.PacketText.addr(p, false) + ":" + p.get(Field.L4_DST) + "/"
                + p.get(Field.IP_PROTO);
    }
}
