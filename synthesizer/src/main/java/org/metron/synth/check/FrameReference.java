package org.metron.synth.check;

import org.metron.synth.ChainSpec;
import org.metron.synth.core.ChainModel;
import org.metron.synth.hs.Field;
import org.metron.synth.packet.FrameCodec;
import org.metron.synth.packet.HeaderCheck;
import org.metron.synth.packet.OutsideModelException;
import org.metron.synth.packet.Packet;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What the original chain (the {@link ReferenceInterpreter}, NF by NF with Click's semantics) does with real
 * frames: for each input frame the output frames it may send, byte for byte, at which egress. A pool choice
 * (load-balancer mapping) gives one alternative per choice; a port a rewriter allocates is a {@link
 * FrameCodec.Free} field of the frame, with the checksums that cover it.
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
    }

    /** One output frame the chain may send. */
    public static final class Output {
        public final int egress;
        public final byte[] bytes;
        public final List<FrameCodec.Free> free;

        Output(int egress, byte[] bytes, List<FrameCodec.Free> free) {
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
        FrameCodec.Decoded d;
        try {
            d = FrameCodec.decode(frame);
        } catch (OutsideModelException e) {
            return new Expectation(id, kind, Expectation.OUTSIDE, e.getMessage(), List.of(), "");
        }
        try {
            Outcome first = ref.run(d.packet, 0, false);
            if (first.egress < 0 && first.droppedBy == null) {
                first = ref.run(d.packet, 0, true);  // classifiers name the rule that dropped it when tracing
            }
            if (!first.modelled(d.packet)) {
                return new Expectation(id, kind, Expectation.OUTSIDE, "the chain does not reject this "
                        + d.packet.check + " frame at a CheckIPHeader", List.of(), "");
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
            return new Expectation(id, kind, Expectation.OUTSIDE, e.getMessage(), List.of(), "");
        }
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
            List<FrameCodec.Free> free = new ArrayList<>();
            for (Map.Entry<Field, String> a : o.allocated.entrySet()) {
                String[] r = a.getValue().split("-");
                FrameCodec.Free f = FrameCodec.free(frame, dp, a.getKey(), Long.parseLong(r[0]),
                        Long.parseLong(r[1]));
                if (f != null) {
                    free.add(f);
                }
            }
            Output x = new Output(o.egress, FrameCodec.rewrite(frame, dp, o.packet, egressMacs.get(o.egress)), free);
            if (out.stream().noneMatch(x::sameAs)) {
                out.add(x);
            }
        }
        return out;
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
