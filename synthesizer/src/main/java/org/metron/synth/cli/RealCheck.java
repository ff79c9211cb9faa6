package org.metron.synth.cli;

import org.metron.synth.ChainSpec;
import org.metron.synth.check.CaptureComparison;
import org.metron.synth.check.FrameGenerator;
import org.metron.synth.check.FrameReference;
import org.metron.synth.json.JsonWriter;
import org.metron.synth.packet.Pcap;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The real-data-plane side of the differential checker, for tests that deploy a chain and replay frames
 * (tests/e2e/test_real_equivalence.py):
 * <pre>
 * metron-synth CHAIN.json --frames N [--seed S] --pcap IN.pcap          write N generated frames
 * metron-synth CHAIN.json --expect IN.pcap -o EXPECTED.json [--egress-mac K=MAC]...
 *                                                                       the reference's output frames per input
 * metron-synth CHAIN.json --compare IN.pcap --capture K=FILE... [--retry K=FILE...] [--egress-mac K=MAC]...
 *                         [--report R.json] [--missing-pcap M.pcap]    compare captures at egress K with them
 * </pre>
 * {@code --compare} exits 0 when nothing mismatched, 3 otherwise; frames the chain sends that did not arrive
 * are written to {@code --missing-pcap} for a slower replay, whose captures ({@code --retry}) tell losses from
 * mismatches (without {@code --retry} they are reported as missing, neither).
 */
final class RealCheck {
    private RealCheck() {
    }

    /** Options of the real-check modes. */
    static final class Options {
        long frames;
        String pcap;
        String expect;
        String compare;
        String report;
        String missingPcap;
        final Map<Integer, Long> egressMacs = new HashMap<>();
        final List<String[]> captures = new ArrayList<>();
        final List<String[]> retries = new ArrayList<>();

        boolean any() {
            return frames > 0 || expect != null || compare != null;
        }

        /** Reads one option at args[i]; returns the next index, or -1 if it is not one of these. */
        int read(String[] args, int i) {
            switch (args[i]) {
                case "--frames":
                    frames = Long.parseLong(MetronSynth.value(args, i + 1));
                    return i + 2;
                case "--pcap":
                    pcap = MetronSynth.value(args, i + 1);
                    return i + 2;
                case "--expect":
                    expect = MetronSynth.value(args, i + 1);
                    return i + 2;
                case "--compare":
                    compare = MetronSynth.value(args, i + 1);
                    return i + 2;
                case "--report":
                    report = MetronSynth.value(args, i + 1);
                    return i + 2;
                case "--missing-pcap":
                    missingPcap = MetronSynth.value(args, i + 1);
                    return i + 2;
                case "--egress-mac": {
                    String[] kv = pair(MetronSynth.value(args, i + 1), "--egress-mac");
                    egressMacs.put(Integer.parseInt(kv[0]), Long.parseLong(kv[1].replace(":", ""), 16));
                    return i + 2;
                }
                case "--capture":
                    captures.add(pair(MetronSynth.value(args, i + 1), "--capture"));
                    return i + 2;
                case "--retry":
                    retries.add(pair(MetronSynth.value(args, i + 1), "--retry"));
                    return i + 2;
                default:
                    return -1;
            }
        }

        private static String[] pair(String v, String opt) {
            int eq = v.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException(opt + " takes K=VALUE (egress index K), got '" + v + "'");
            }
            return new String[] {v.substring(0, eq), v.substring(eq + 1)};
        }
    }

    /** Runs the mode the options ask for; returns the exit code. */
    static int run(ChainSpec chain, Options o, String outPath, long seed, PrintStream out) throws IOException {
        if (o.frames > 0) {
            if (o.pcap == null) {
                throw new IllegalArgumentException("--frames needs --pcap OUT.pcap");
            }
            long t0 = System.nanoTime();
            FrameGenerator gen = new FrameGenerator(chain, seed);
            try (Pcap.Writer w = new Pcap.Writer(Paths.get(o.pcap))) {
                for (long i = 0; i < o.frames; i++) {
                    w.write(gen.next().bytes);
                }
            }
            out.printf("wrote %d frames to %s in %.1f s%n", o.frames, o.pcap, (System.nanoTime() - t0) / 1e9);
            return 0;
        }
        FrameReference ref = new FrameReference(chain, o.egressMacs);
        String in = o.expect != null ? o.expect : o.compare;
        Map<Integer, byte[]> inputs = new LinkedHashMap<>();
        List<FrameReference.Expectation> expected = new ArrayList<>();
        Pcap.read(Paths.get(in), f -> {
            Object[] who = FrameGenerator.identify(f);
            // a frame without a marker (a header cut before its payload; a user's pcap) is numbered -1, -2, ...
            int id = who == null ? -1 - inputs.size() : (Integer) who[0];
            inputs.put(id, f);
            expected.add(ref.expect(id, who == null ? FrameGenerator.unmarkedKind(f) : (FrameGenerator.Kind) who[1], f));
        });
        if (o.expect != null) {
            if (outPath == null) {
                throw new IllegalArgumentException("--expect needs -o EXPECTED.json");
            }
            List<Object> all = new ArrayList<>();
            expected.forEach(e -> all.add(json(e)));
            try (BufferedWriter w = Files.newBufferedWriter(Paths.get(outPath), StandardCharsets.UTF_8)) {
                w.write(JsonWriter.write(all));
            }
            out.printf("wrote the reference's outputs for %d frames to %s%n", expected.size(), outPath);
            return 0;
        }
        CaptureComparison cmp = new CaptureComparison(expected, inputs);
        for (String[] c : o.captures) {
            int egress = Integer.parseInt(c[0]);
            Pcap.read(Paths.get(c[1]), f -> cmp.add(new CaptureComparison.Captured(egress, 0, f)));
        }
        for (String[] c : o.retries) {
            int egress = Integer.parseInt(c[0]);
            Pcap.read(Paths.get(c[1]), f -> cmp.add(new CaptureComparison.Captured(egress, 1, f)));
        }
        CaptureComparison.Report r = cmp.compare();
        if (o.missingPcap != null) {
            try (Pcap.Writer w = new Pcap.Writer(Paths.get(o.missingPcap))) {
                for (int id : r.missing) {
                    w.write(inputs.get(id));
                }
            }
        }
        if (!o.retries.isEmpty()) {
            cmp.missingAreMismatches(r);
        }
        String json = r.json();
        if (o.report != null) {
            Files.write(Paths.get(o.report), json.getBytes(StandardCharsets.UTF_8));
        }
        out.printf("%d frames: %d delivered, %d dropped, %d mismatches, %d losses, %d missing, %d outside the model, "
                + "%d bad-checksum frames forwarded by the switch%n", r.sent, r.delivered, r.dropped,
                r.mismatches + r.unidentified, r.losses, r.missing.size(), r.outside, r.exceptions);
        return r.mismatches + r.unidentified == 0 ? 0 : 3;
    }

    private static Map<String, Object> json(FrameReference.Expectation e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("id", e.id);
        m.put("kind", String.valueOf(e.kind));
        m.put("status", e.status);
        m.put("why", e.why);
        List<Object> outs = new ArrayList<>();
        for (FrameReference.Output x : e.outputs) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("egress", x.egress);
            StringBuilder hex = new StringBuilder();
            for (byte b : x.bytes) {
                hex.append(String.format("%02x", b & 0xff));
            }
            o.put("bytes", hex.toString());
            List<Object> free = new ArrayList<>();
            x.free.forEach(f -> free.add(List.of(f.offset, f.bytes, f.lo, f.hi)));
            o.put("allocated", free);
            outs.add(o);
        }
        m.put("outputs", outs);
        m.put("flow", e.flow);
        return m;
    }
}
