package org.metron.synth.check;

import org.metron.synth.json.JsonText;
import org.metron.synth.packet.FrameCodec;
import org.metron.synth.packet.FrameRewrite;
import org.metron.synth.packet.OutsideModelException;
import org.metron.synth.packet.PacketText;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Frames captured where a deployed chain's traffic leaves, compared frame by frame with the reference's
 * {@link FrameReference.Expectation}s: every frame the chain sends must arrive once, byte for byte (allocated
 * fields within their range, their checksums consistent), at its egress; nothing the chain drops may arrive;
 * every packet of a flow must leave with the same mapping (within one window of a windowed trace, and one replay
 * pass of it: {@link FrameGenerator}; a flow's packets further apart than the chain's idle timeout may meet a
 * new mapping, in Click as on the data plane). Frames that the first
 * replay missed but a slower second replay delivered are losses (counted apart); missing from both, they are
 * mismatches.
 */
public final class CaptureComparison {
    /** Mismatches described in full in the report. */
    static final int DETAILED = 10;

    /** A captured frame: where, in which replay pass (0 first, 1 the slow retry of missing frames). */
    public static final class Captured {
        final int egress;
        final int pass;
        final byte[] bytes;

        public Captured(int egress, int pass, byte[] bytes) {
            this.egress = egress;
            this.pass = pass;
            this.bytes = bytes;
        }
    }

    private final Map<Integer, FrameReference.Expectation> expected;
    private final Map<Integer, List<Captured>> seen = new HashMap<>();
    private final List<Captured> unidentified = new ArrayList<>();
    private final Map<Integer, byte[]> inputs;
    /** Frames per window of the trace (0: one window, whose retry pass follows within its idle timeouts). */
    private final int window;

    /** Input frames without a marker by their bytes after the destination MAC (which switches rewrite). */
    private final Map<String, Integer> unmarked = new HashMap<>();

    /** @param inputs the input frames by number (for the report) */
    public CaptureComparison(List<FrameReference.Expectation> expected, Map<Integer, byte[]> inputs) {
        this(expected, inputs, 0);
    }

    /**
     * @param window frames per window of a windowed trace: flow state is compared per window and replay pass
     *               (0: over the whole trace and both passes)
     */
    public CaptureComparison(List<FrameReference.Expectation> expected, Map<Integer, byte[]> inputs, int window) {
        this.window = window;
        this.expected = new LinkedHashMap<>();
        expected.forEach(e -> this.expected.put(e.id, e));
        this.inputs = inputs;
        inputs.forEach((id, f) -> {
            if (FrameGenerator.identify(f) == null) {
                unmarked.put(hex(Arrays.copyOfRange(f, 6, f.length)), id);
            }
        });
    }

    public void add(Captured c) {
        Object[] who = FrameGenerator.identify(c.bytes);
        Integer id = who != null ? (Integer) who[0]
                : c.bytes.length < 6 ? null : unmarked.get(hex(Arrays.copyOfRange(c.bytes, 6, c.bytes.length)));
        if (id == null || !expected.containsKey(id)) {
            unidentified.add(c);
            return;
        }
        seen.computeIfAbsent(id, k -> new ArrayList<>()).add(c);
    }

    /** Counts of one kind of frame. */
    static final class Tally {
        long sent;
        long delivered;
        long dropped;
        long mismatches;
        long losses;
        long outside;
        long exceptions;
    }

    /** Compares everything added; the report as JSON, with {@code missing} = frames to replay again. */
    public Report compare() {
        Report r = new Report();
        Map<String, String> flowOut = new HashMap<>();
        for (FrameReference.Expectation e : expected.values()) {
            List<Captured> got = seen.getOrDefault(e.id, List.of());
            Tally t = r.kinds.computeIfAbsent(e.kind == null ? FrameGenerator.Kind.PLAIN : e.kind, k -> new Tally());
            t.sent++;
            r.sent++;
            if (e.status.equals(FrameReference.Expectation.OUTSIDE)) {
                t.outside++;
                r.outside++;
                continue;
            }
            boolean exception = e.status.equals(FrameReference.Expectation.CHECKSUM_EXCEPTION);
            if (got.isEmpty()) {
                if (e.outputs.isEmpty() || exception) {
                    t.dropped++;
                    r.dropped++;
                } else {
                    r.missing.add(e.id);
                }
                continue;
            }
            if (e.outputs.isEmpty()) {
                mismatch(r, t, e, got.get(0), "delivered at egress " + got.get(0).egress + "; the chain drops it ("
                        + e.why + ")");
                continue;
            }
            if (got.size() > 1 && got.stream().filter(c -> c.pass == got.get(0).pass).count() > 1) {
                mismatch(r, t, e, got.get(1), got.size() + " copies arrived");
                continue;
            }
            Captured c = got.get(0);
            String why = match(e, c);
            if (why != null) {
                mismatch(r, t, e, c, why);
                continue;
            }
            if (!e.flow.isEmpty()) {
                // one mapping per flow (not one flow per mapping: Click's rewriters make a port unique per
                // rewritten 5-tuple only, and a load balancer after a NAPT may then map two flows alike)
                String out = outTuple(c.bytes);
                String key = window == 0 ? e.flow : e.id / window + "/" + c.pass + "/" + e.flow;
                String before = flowOut.putIfAbsent(key, out);
                if (before != null && !before.equals(out)) {
                    mismatch(r, t, e, c, "flow " + e.flow + " left as " + out + ", an earlier packet of it as " + before);
                    continue;
                }
            }
            if (exception) {
                t.exceptions++;
                r.exceptions++;
            }
            t.delivered++;
            r.delivered++;
            if (c.pass > 0) {
                t.losses++;
                r.losses++;
            }
        }
        // frames missing after the retry pass are mismatches; before it, candidates for the retry
        r.unidentified = unidentified.size();
        for (Captured u : unidentified) {
            if (r.details.size() < 2 * DETAILED) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("why", "a frame without a known marker arrived at egress " + u.egress);
                m.put("observed", hex(u.bytes));
                r.details.add(m);
            }
        }
        return r;
    }

    /** After the retry pass: the frames still missing become mismatches. */
    public void missingAreMismatches(Report r) {
        for (int id : r.missing) {
            FrameReference.Expectation e = expected.get(id);
            Tally t = r.kinds.get(e.kind == null ? FrameGenerator.Kind.PLAIN : e.kind);
            mismatch(r, t, e, null, "not delivered (also not when sent again, slowly); the chain sends it at egress "
                    + e.outputs.get(0).egress);
        }
        r.missing.clear();
    }

    /** Null if the captured frame is one of the expected outputs, else why not. */
    private static String match(FrameReference.Expectation e, Captured c) {
        String why = null;
        for (FrameReference.Output o : e.outputs) {
            String out = matchOutput(o, c.egress, c.bytes);
            if (out == null) {
                return null;
            }
            why = why == null || why.startsWith("arrived at") ? out : why;
        }
        return why;
    }

    /** Null if a frame that arrived at {@code egress} is this output, else why not. */
    static String matchOutput(FrameReference.Output o, int egress, byte[] bytes) {
        if (o.egress != egress) {
            return "arrived at egress " + egress + ", the chain sends it at egress " + o.egress;
        }
        for (FrameRewrite.Free f : o.free) {
            if (f.offset + f.bytes > bytes.length) {
                return "frame too short for its allocated field at " + f.offset;
            }
            long v = FrameRewrite.valueAt(bytes, f);
            if (v < f.lo || v > f.hi) {
                return "allocated field at byte " + f.offset + " is " + v + ", outside " + f.lo + "-" + f.hi;
            }
        }
        byte[] want = FrameRewrite.adopt(o.bytes, bytes, o.free);
        return Arrays.equals(want, bytes) ? null : differ(want, bytes);
    }

    private static String differ(byte[] want, byte[] got) {
        if (want.length != got.length) {
            return "length " + got.length + ", expected " + want.length;
        }
        for (int i = 0; i < want.length; i++) {
            if (want[i] != got[i]) {
                return String.format("byte %d is 0x%02x, expected 0x%02x", i, got[i] & 0xff, want[i] & 0xff);
            }
        }
        return "equal";
    }

    private static String outTuple(byte[] f) {
        try {
            return FrameReference.tuple(FrameCodec.decode(f).packet);
        } catch (OutsideModelException e) {
            return "?";
        }
    }

    private void mismatch(Report r, Tally t, FrameReference.Expectation e, Captured c, String why) {
        t.mismatches++;
        r.mismatches++;
        if (r.mismatches > DETAILED) {  // the first DETAILED in full
            return;
        }
        boolean ext = false;
        try {
            ext = FrameCodec.decode(inputs.get(e.id)).layout.ipv6Extensions;
        } catch (OutsideModelException x) {
            // not IPv6 with extension headers
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", e.id);
        m.put("ipv6ExtensionHeaders", ext);
        m.put("kind", String.valueOf(e.kind));
        m.put("why", why);
        byte[] in = inputs.get(e.id);
        m.put("input", hex(in));
        try {
            m.put("inputPacket", PacketText.format(FrameCodec.decode(in).packet));
        } catch (OutsideModelException x) {
            m.put("inputPacket", x.getMessage());
        }
        List<Object> outs = new ArrayList<>();
        for (FrameReference.Output o : e.outputs) {
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("egress", o.egress);
            x.put("bytes", hex(o.bytes));
            x.put("allocatedFields", o.free.size());
            outs.add(x);
        }
        m.put("expected", e.outputs.isEmpty() ? "drop: " + e.why : outs);
        if (c != null) {
            m.put("observedEgress", c.egress);
            m.put("observed", hex(c.bytes));
        }
        r.details.add(m);
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) {
            sb.append(Character.forDigit(x >> 4 & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return sb.toString();
    }

    /** The outcome of a comparison. */
    public static final class Report {
        public long sent;
        public long delivered;
        public long dropped;
        public long mismatches;
        public long losses;
        public long outside;
        public long exceptions;
        public long unidentified;
        /** Frames the chain sends that did not arrive (replay them again to tell losses from mismatches). */
        public final List<Integer> missing = new ArrayList<>();
        final Map<FrameGenerator.Kind, Tally> kinds = new EnumMap<>(FrameGenerator.Kind.class);
        final List<Map<String, Object>> details = new ArrayList<>();

        public String json() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("sent", sent);
            m.put("delivered", delivered);
            m.put("dropped", dropped);
            m.put("mismatches", mismatches + unidentified);
            m.put("losses", losses);
            m.put("missing", missing.size());
            m.put("outsideModel", outside);
            m.put("checksumExceptions", exceptions);
            m.put("unidentified", unidentified);
            Map<String, Object> k = new TreeMap<>();
            kinds.forEach((kind, t) -> {
                Map<String, Object> x = new LinkedHashMap<>();
                x.put("sent", t.sent);
                x.put("delivered", t.delivered);
                x.put("dropped", t.dropped);
                x.put("mismatches", t.mismatches);
                x.put("losses", t.losses);
                x.put("outside", t.outside);
                x.put("checksumExceptions", t.exceptions);
                k.put(kind.name(), x);
            });
            m.put("kinds", k);
            m.put("missingIds", missing);
            m.put("mismatchDetails", details);
            return JsonText.write(JsonText.MAPPER.valueToTree(m));
        }
    }
}
