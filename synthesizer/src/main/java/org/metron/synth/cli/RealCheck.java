package org.metron.synth.cli;

import org.metron.synth.ChainSpec;
import org.metron.synth.check.CaptureComparison;
import org.metron.synth.check.FrameGenerator;
import org.metron.synth.check.FrameReference;
import org.metron.synth.core.FlowState;
import com.fasterxml.jackson.databind.DeserializationFeature;
import org.metron.synth.json.JsonText;
import org.metron.synth.packet.FrameCodec;
import org.metron.synth.packet.OutsideModelException;
import org.metron.synth.packet.Pcap;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The real-data-plane side of the differential checker, for tests that deploy a chain and replay frames
 * (tests/e2e/test_real_equivalence.py):
 * <pre>
 * metron-synth CHAIN.json --frames N [--seed S] [--pps R] --pcap IN.pcap write N generated frames (for a
 *                                                                       replay at R frames/s: in windows, printed,
 *                                                                       when they outlast the idle timeouts)
 * metron-synth CHAIN.json --expect IN.pcap -o EXPECTED.json [--egress-mac K=MAC]...
 *                                                                       the reference's output frames per input
 * metron-synth CHAIN.json --compare IN.pcap --capture K=FILE... [--retry K=FILE...] [--egress-mac K=MAC]...
 *                         [--report R.json] [--missing-pcap M.pcap]    compare captures at egress K with them
 *                         [--window W]                                  (flow state per window of W frames)
 * metron-synth CHAIN.json --replies OUT.pcap --forward IN.pcap --capture K=FILE... [--retry K=FILE...]
 *                         -o EXPECTED.json [--egress-mac K=MAC]...      replies to the delivered forward frames
 *                         [--since ID]                                  (and to no flow), with their expectations;
 *                                                                       --since: to forward frames ID and later only
 * metron-synth --compare-expected EXPECTED.json --inputs IN.pcap --capture K=FILE... [--retry ...] [--report ...]
 * </pre>
 * The compare modes exit 0 when nothing mismatched, 3 otherwise; frames the chain sends that did not arrive are
 * written to {@code --missing-pcap} for a slower replay, whose captures ({@code --retry}) tell losses from
 * mismatches (without {@code --retry} they are reported as missing, neither).
 */
final class RealCheck {
    /** Replies to no flow: one per this many replies to delivered frames. */
    static final int UNMAPPED_EVERY = 4;

    private RealCheck() {
    }

    /** Options of the real-check modes: one value each, or K=VALUE pairs that may repeat. */
    static final class Options {
        private static final Set<String> SINGLE = Set.of("--frames", "--pcap", "--expect", "--compare",
                "--compare-expected", "--inputs", "--replies", "--forward", "--report", "--missing-pcap", "--pps",
                "--window", "--since");
        private static final Set<String> PAIRS = Set.of("--egress-mac", "--capture", "--retry");
        private final Map<String, String> single = new HashMap<>();
        private final Map<String, List<String[]>> pairs = new HashMap<>();

        String get(String option) {
            return single.get(option);
        }

        /** The K=VALUE pairs given for an option, in order. */
        List<String[]> pairs(String option) {
            return pairs.getOrDefault(option, List.of());
        }

        long frames() {
            return single.containsKey("--frames") ? Long.parseLong(single.get("--frames")) : 0;
        }

        /** Per egress index, the destination MAC frames leave with there. */
        Map<Integer, Long> egressMacs() {
            Map<Integer, Long> m = new HashMap<>();
            pairs("--egress-mac").forEach(kv -> m.put(Integer.parseInt(kv[0]),
                    Long.parseLong(kv[1].replace(":", ""), 16)));
            return m;
        }

        boolean any() {
            return frames() > 0 || get("--expect") != null || get("--compare") != null || get("--replies") != null;
        }

        /** Reads one option at args[i]; returns the next index, or -1 if it is not one of these. */
        int read(String[] args, int i) {
            String o = args[i];
            if (SINGLE.contains(o)) {
                single.put(o, MetronSynth.value(args, i + 1));
            } else if (PAIRS.contains(o)) {
                String v = MetronSynth.value(args, i + 1);
                int eq = v.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException(o + " takes K=VALUE (egress index K), got '" + v + "'");
                }
                pairs.computeIfAbsent(o, k -> new ArrayList<>()).add(new String[] {v.substring(0, eq),
                    v.substring(eq + 1)});
            } else {
                return -1;
            }
            return i + 2;
        }
    }

    /** Frames of a pcap by the number in their marker (unmarked ones -1, -2, ...), in order. */
    private static Map<Integer, byte[]> frames(String path) throws IOException {
        Map<Integer, byte[]> out = new LinkedHashMap<>();
        Pcap.read(Paths.get(path), f -> {
            Object[] who = FrameGenerator.identify(f);
            out.put(who == null ? -1 - out.size() : (Integer) who[0], f);
        });
        return out;
    }

    private static FrameGenerator.Kind kind(byte[] f) {
        Object[] who = FrameGenerator.identify(f);
        return who == null ? FrameGenerator.unmarkedKind(f) : (FrameGenerator.Kind) who[1];
    }

    /** The compare-only mode (no chain needed: the expectations are in the file); returns the exit code. */
    static int compareExpected(Options o, PrintStream out) throws IOException {
        if (o.get("--inputs") == null) {
            throw new IllegalArgumentException("--compare-expected needs --inputs IN.pcap");
        }
        List<FrameReference.Expectation> expected = new ArrayList<>();
        // integers as Long, as Expectation.of reads them
        for (Object e : (List<?>) JsonText.MAPPER.reader().with(DeserializationFeature.USE_LONG_FOR_INTS)
                .readValue(new String(Files.readAllBytes(Paths.get(o.get("--compare-expected"))),
                        StandardCharsets.UTF_8), Object.class)) {
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) e;
            expected.add(FrameReference.Expectation.of(m));
        }
        return compare(o, expected, frames(o.get("--inputs")), out);
    }

    /** Runs the mode the options ask for; returns the exit code. */
    static int run(ChainSpec chain, Options o, String outPath, long seed, PrintStream out) throws IOException {
        if (o.frames() > 0) {
            if (o.get("--pcap") == null) {
                throw new IllegalArgumentException("--frames needs --pcap OUT.pcap");
            }
            long t0 = System.nanoTime();
            int window = o.get("--pps") == null ? 0
                    : FrameGenerator.windowFrames(chain, o.frames(), Double.parseDouble(o.get("--pps")));
            FrameGenerator gen = new FrameGenerator(chain, seed, window);
            try (Pcap.Writer w = new Pcap.Writer(Paths.get(o.get("--pcap")))) {
                for (long i = 0; i < o.frames(); i++) {
                    w.write(gen.next().bytes);
                }
            }
            out.printf("wrote %d frames to %s in %.1f s%n", o.frames(), o.get("--pcap"), (System.nanoTime() - t0) / 1e9);
            if (window > 0) {
                out.printf("in windows of %d frames%n", window);
            }
            return 0;
        }
        FrameReference ref = new FrameReference(chain, o.egressMacs());
        if (o.get("--replies") != null) {
            return replies(chain, o, ref, outPath, seed, out);
        }
        String in = o.get("--expect") != null ? o.get("--expect") : o.get("--compare");
        Map<Integer, byte[]> inputs = frames(in);
        List<FrameReference.Expectation> expected = new ArrayList<>();
        inputs.forEach((id, f) -> expected.add(ref.expect(id, kind(f), f)));
        if (o.get("--expect") != null) {
            write(expected, outPath, "--expect");
            out.printf("wrote the reference's outputs for %d frames to %s%n", expected.size(), outPath);
            return 0;
        }
        return compare(o, expected, inputs, out);
    }

    private static void write(List<FrameReference.Expectation> expected, String outPath, String mode)
            throws IOException {
        if (outPath == null) {
            throw new IllegalArgumentException(mode + " needs -o EXPECTED.json");
        }
        List<Object> all = new ArrayList<>();
        expected.forEach(e -> all.add(e.json()));
        try (BufferedWriter w = Files.newBufferedWriter(Paths.get(outPath), StandardCharsets.UTF_8)) {
            w.write(JsonText.write(JsonText.MAPPER.valueToTree(all)));
        }
    }

    /**
     * Replies to every forward frame that arrived (as captured), and one in {@link #UNMAPPED_EVERY} more to no
     * flow (never the mirror of a frame that arrived), with the reference's expectations.
     */
    private static int replies(ChainSpec chain, Options o, FrameReference ref, String outPath, long seed,
                               PrintStream out) throws IOException {
        if (o.get("--forward") == null) {
            throw new IllegalArgumentException("--replies needs --forward IN.pcap (the forward frames)");
        }
        Map<Integer, byte[]> forward = frames(o.get("--forward"));
        // a windowed trace answers its last window only: earlier windows' mappings may have legitimately expired
        int since = o.get("--since") == null ? 0 : Integer.parseInt(o.get("--since"));
        Map<Integer, Object[]> seen = new LinkedHashMap<>();
        List<String[]> all = new ArrayList<>(o.pairs("--capture"));
        all.addAll(o.pairs("--retry"));
        for (String[] c : all) {
            int egress = Integer.parseInt(c[0]);
            Pcap.read(Paths.get(c[1]), f -> {
                Object[] who = FrameGenerator.identify(f);
                if (who != null && forward.containsKey((Integer) who[0])) {
                    seen.putIfAbsent((Integer) who[0], new Object[] {egress, f});
                }
            });
        }
        FrameGenerator gen = new FrameGenerator(chain, seed ^ 0x5e91);
        // earlier windows' mappings may still live: a reply to no flow must not mirror theirs either (their own
        // generator, so the replies sent are the same with or without --since)
        FrameGenerator earlier = new FrameGenerator(chain, seed ^ 0x5e92);
        Long srcMac = o.egressMacs().get(0);
        Long dstMac = o.egressMacs().get(1);
        Set<String> mirrored = new HashSet<>();
        List<FrameReference.Expectation> expected = new ArrayList<>();
        List<byte[]> sent = new ArrayList<>();
        int n = 0;
        for (Map.Entry<Integer, byte[]> e : forward.entrySet()) {
            Object[] s = seen.get(e.getKey());
            if (s == null) {
                continue;
            }
            if (e.getKey() < since) {
                try {
                    mirrored.add(tuple(earlier.reply(e.getKey(), (byte[]) s[1]).bytes));
                } catch (OutsideModelException x) {
                    // nothing to avoid
                }
                continue;
            }
            FrameGenerator.Frame r = gen.reply(e.getKey(), (byte[]) s[1]);
            try {
                mirrored.add(tuple(r.bytes));
            } catch (OutsideModelException x) {
                continue;
            }
            expected.add(ref.expectReply(r.id, r.kind, r.bytes, e.getValue(), (byte[]) s[1], (Integer) s[0]));
            sent.add(r.bytes);
            if (++n % UNMAPPED_EVERY == 0 && srcMac != null && dstMac != null) {
                FrameGenerator.Frame u = gen.unmappedReply(srcMac, dstMac);
                if (u != null && !mirrored.contains(tuple(u.bytes))) {
                    expected.add(ref.expectReply(u.id, u.kind, u.bytes, null, null, -1));
                    sent.add(u.bytes);
                }
            }
        }
        try (Pcap.Writer w = new Pcap.Writer(Paths.get(o.get("--replies")))) {
            for (byte[] f : sent) {
                w.write(f);
            }
        }
        write(expected, outPath, "--replies");
        out.printf("wrote %d replies to %s, their expectations to %s%n", sent.size(), o.get("--replies"), outPath);
        return 0;
    }

    private static String tuple(byte[] f) {
        return Arrays.toString(FlowState.tuple(FrameCodec.decode(f).packet));
    }

    private static int compare(Options o, List<FrameReference.Expectation> expected, Map<Integer, byte[]> inputs,
                               PrintStream out) throws IOException {
        CaptureComparison cmp = new CaptureComparison(expected, inputs,
                o.get("--window") == null ? 0 : Integer.parseInt(o.get("--window")));
        for (String[] c : o.pairs("--capture")) {
            int egress = Integer.parseInt(c[0]);
            Pcap.read(Paths.get(c[1]), f -> cmp.add(new CaptureComparison.Captured(egress, 0, f)));
        }
        for (String[] c : o.pairs("--retry")) {
            int egress = Integer.parseInt(c[0]);
            Pcap.read(Paths.get(c[1]), f -> cmp.add(new CaptureComparison.Captured(egress, 1, f)));
        }
        CaptureComparison.Report r = cmp.compare();
        if (o.get("--missing-pcap") != null) {
            try (Pcap.Writer w = new Pcap.Writer(Paths.get(o.get("--missing-pcap")))) {
                for (int id : r.missing) {
                    w.write(inputs.get(id));
                }
            }
        }
        if (!o.pairs("--retry").isEmpty()) {
            cmp.missingAreMismatches(r);
        }
        String json = r.json();
        if (o.get("--report") != null) {
            Files.write(Paths.get(o.get("--report")), json.getBytes(StandardCharsets.UTF_8));
        }
        out.printf("%d frames: %d delivered, %d dropped, %d mismatches, %d losses, %d missing, %d outside the model, "
                + "%d bad-checksum frames forwarded by the switch%n", r.sent, r.delivered, r.dropped,
                r.mismatches + r.unidentified, r.losses, r.missing.size(), r.outside, r.exceptions);
        return r.mismatches + r.unidentified == 0 ? 0 : 3;
    }
}
