package org.metron.synth.check;

import org.metron.synth.hs.Field;
import org.metron.synth.packet.Packet;

import java.util.List;
import java.util.Map;

/** What one packet's run produced: verdict, final headers, allocated fields, stateful operation, trace. */
public final class Outcome {
    /** Egress index, or -1 for drop. */
    public final int egress;
    public final Packet packet;
    public final Map<Field, String> allocated;
    public final String stateful;
    public final String droppedBy;
    public final List<String> trace;
    /** True if a CheckIPHeader rejected the frame on its way (then dropped unless its output 1 leads on). */
    public final boolean headerRejected;
    /** The black boxes the packet met and what each was handed, in order. */
    public List<org.metron.synth.core.Run.BoxInput> boxInputs = List.of();
    /** Choice seeds 0..span-1 give every outcome pool choices can give this packet (see Run#span). */
    public long span = 1;

    Outcome(int egress, Packet packet, Map<Field, String> allocated, String stateful, String droppedBy,
            List<String> trace) {
        this(egress, packet, allocated, stateful, droppedBy, trace, false);
    }

    Outcome(int egress, Packet packet, Map<Field, String> allocated, String stateful, String droppedBy,
            List<String> trace, boolean headerRejected) {
        this.headerRejected = headerRejected;
        this.egress = egress;
        this.packet = packet;
        this.allocated = allocated;
        this.stateful = stateful;
        this.droppedBy = droppedBy;
        this.trace = trace;
    }

    /**
     * Differences between a reference outcome and a synthesized one, or null if equivalent. Drops compare by
     * verdict only. The dst MAC is compared only when the chain wrote it (otherwise the switch's tag sits there
     * and the agent writes the egress MAC).
     */
    public static String diff(Packet input, Outcome ref, Outcome syn) {
        String boxes = boxDiff(input, ref, syn);
        if (boxes != null) {
            return boxes;
        }
        if (ref.egress != syn.egress) {
            return "verdict: reference " + verdict(ref) + ", synthesized " + verdict(syn);
        }
        if (ref.egress < 0) {
            return null;
        }
        StringBuilder sb = new StringBuilder();
        for (Field f : Field.values()) {
            if (f == Field.ETH_DST && ref.packet.get(f) == input.get(f)) {
                continue;
            }
            if (ref.allocated.containsKey(f) || syn.allocated.containsKey(f)) {
                continue;
            }
            if (ref.packet.get(f) != syn.packet.get(f)) {
                sb.append(f).append(": reference ").append(Long.toUnsignedString(ref.packet.get(f)))
                        .append(", synthesized ").append(Long.toUnsignedString(syn.packet.get(f))).append("; ");
            }
        }
        if (!ref.allocated.equals(syn.allocated)) {
            sb.append("allocated ports: reference ").append(ref.allocated).append(", synthesized ")
                    .append(syn.allocated).append("; ");
        }
        if (!ref.stateful.equals(syn.stateful)) {
            sb.append("stateful operation: reference '").append(ref.stateful).append("', synthesized '")
                    .append(syn.stateful).append("'; ");
        }
        return sb.length() == 0 ? null : sb.toString();
    }

    /**
     * True if a reference outcome puts its packet inside what the offload keeps exact: a valid packet, or a frame
     * without a valid IP header that the chain drops at a CheckIPHeader (a chain that forwards such frames
     * elsewhere is outside the model: docs/contracts.md#offload-exceptions).
     */
    public boolean modelled(Packet input) {
        return input.check == org.metron.synth.packet.HeaderCheck.VALID || egress < 0 && headerRejected;
    }

    /**
     * Whether both sides handed the same black boxes the same packets (the Click parts before each box are
     * equivalent): every field but the dst MAC, which holds the class tag on the synthesized side unless the
     * chain wrote it; null if so.
     */
    private static String boxDiff(Packet input, Outcome ref, Outcome syn) {
        int n = Math.max(ref.boxInputs.size(), syn.boxInputs.size());
        for (int i = 0; i < n; i++) {
            if (i >= ref.boxInputs.size() || i >= syn.boxInputs.size()
                    || !ref.boxInputs.get(i).nf.equals(syn.boxInputs.get(i).nf)) {
                return "black boxes met: reference " + names(ref) + ", synthesized " + names(syn);
            }
            Packet a = ref.boxInputs.get(i).packet;
            Packet b = syn.boxInputs.get(i).packet;
            for (Field f : Field.values()) {
                if (f == Field.ETH_DST && a.get(f) == input.get(f)) {
                    continue;
                }
                if (a.get(f) != b.get(f)) {
                    return "black box " + ref.boxInputs.get(i).nf + " handed " + f + ": reference "
                            + Long.toUnsignedString(a.get(f)) + ", synthesized " + Long.toUnsignedString(b.get(f));
                }
            }
            if (!java.util.Arrays.equals(a.payload, b.payload)) {
                return "black box " + ref.boxInputs.get(i).nf + " handed a different payload";
            }
        }
        return null;
    }

    private static List<String> names(Outcome o) {
        List<String> out = new java.util.ArrayList<>();
        o.boxInputs.forEach(b -> out.add(b.nf));
        return out;
    }

    private static String verdict(Outcome o) {
        return o.egress < 0 ? "drop (" + o.droppedBy + ")" : "egress " + o.egress;
    }
}
