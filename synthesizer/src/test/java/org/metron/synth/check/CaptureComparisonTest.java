package org.metron.synth.check;

import org.junit.Test;
import org.metron.synth.ChainSpec;
import org.metron.synth.packet.FrameCodec;
import org.metron.synth.packet.FrameRewrite;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;

/**
 * The real-data-plane comparison against a stand-in data plane built from the reference's own outputs (a port
 * per flow from its range, a pool choice per flow): it must find no mismatch there, and find each fault planted
 * in it (a changed byte, a frame the chain drops delivered, a flow remapped, a frame missing, a port outside
 * its range).
 */
public class CaptureComparisonTest {
    private static final long SINK = 0x020000000002L;

    private static final class Run {
        final List<FrameReference.Expectation> expected = new ArrayList<>();
        final Map<Integer, byte[]> inputs = new LinkedHashMap<>();
        /** What a faithful data plane sends, per frame number. */
        final Map<Integer, byte[]> sent = new LinkedHashMap<>();
    }

    private static Run faithful() throws Exception {
        ChainSpec chain = chain();
        FrameGenerator gen = new FrameGenerator(chain, 11);
        FrameReference ref = new FrameReference(chain, Map.of(0, SINK));
        Run r = new Run();
        Map<String, Integer> choice = new HashMap<>();
        for (int i = 0; i < 3000; i++) {
            FrameGenerator.Frame f = gen.next();
            FrameReference.Expectation e = ref.expect(f.id, f.kind, f.bytes);
            r.expected.add(e);
            r.inputs.put(f.id, f.bytes);
            if (e.outputs.isEmpty() || e.status.equals(FrameReference.Expectation.OUTSIDE)) {
                continue;
            }
            // one pool choice and one allocated port per flow, as a data plane's flow table keeps them
            int k = choice.computeIfAbsent(e.flow, x -> choice.size());
            FrameReference.Output o = e.outputs.get(k % e.outputs.size());
            byte[] b = o.bytes.clone();
            for (FrameRewrite.Free fr : o.free) {
                long v = fr.lo + k % (fr.hi - fr.lo + 1);
                byte[] with = b.clone();
                for (int j = fr.bytes - 1; j >= 0; j--) {
                    with[fr.offset + j] = (byte) (v >> (8 * (fr.bytes - 1 - j)));
                }
                b = FrameRewrite.adopt(b, with, List.of(fr));
            }
            r.sent.put(f.id, b);
        }
        return r;
    }

    private static ChainSpec chain() throws Exception {
        Path p = Paths.get(System.getProperty("basedir", "."), "corpus", "fw1000-napt-lb.json");
        return ChainSpec.fromJson(new String(Files.readAllBytes(p), StandardCharsets.UTF_8));
    }

    private static CaptureComparison.Report compare(Run r, Map<Integer, byte[]> sent) {
        return compare(r, sent, 0, -1);
    }

    /** With windows of {@code window} frames; frame {@code retried} arrives in the retry pass. */
    private static CaptureComparison.Report compare(Run r, Map<Integer, byte[]> sent, int window, int retried) {
        CaptureComparison c = new CaptureComparison(r.expected, r.inputs, window);
        sent.forEach((id, b) -> c.add(new CaptureComparison.Captured(0, id == retried ? 1 : 0, b)));
        return c.compare();
    }

    @Test
    public void aFaithfulDataPlaneHasNoMismatchAndEachPlantedFaultIsFound() throws Exception {
        Run r = faithful();
        CaptureComparison.Report ok = compare(r, r.sent);
        assertEquals(ok.json(), 0, ok.mismatches + ok.unidentified);
        assertEquals(0, ok.missing.size());
        assertTrue(ok.delivered > 300 && ok.dropped > 300);
        long stateful = r.expected.stream().filter(e -> !e.flow.isEmpty()).count();
        assertTrue("frames with an allocated port or a pool choice: " + stateful, stateful > 100);

        List<Integer> ids = new ArrayList<>(r.sent.keySet());
        // a byte changed (the TTL of an IPv4 frame, or anything of an IPv6 one)
        Map<Integer, byte[]> bad = new LinkedHashMap<>(r.sent);
        byte[] b = bad.get(ids.get(0)).clone();
        b[22] ^= 1;
        bad.put(ids.get(0), b);
        assertEquals(1, compare(r, bad).mismatches);
        // a frame the chain drops arrives
        bad = new LinkedHashMap<>(r.sent);
        FrameReference.Expectation dropped = r.expected.stream()
                .filter(e -> e.outputs.isEmpty() && e.status.equals(FrameReference.Expectation.MODELLED))
                .findFirst().get();
        bad.put(dropped.id, r.inputs.get(dropped.id));
        assertEquals(1, compare(r, bad).mismatches);
        // a frame missing: missing, not yet a mismatch (a slower replay tells loss from drop)
        bad = new LinkedHashMap<>(r.sent);
        bad.remove(ids.get(1));
        CaptureComparison.Report missing = compare(r, bad);
        assertEquals(0, missing.mismatches);
        assertEquals(List.of(ids.get(1)), missing.missing);
        // a second packet of a flow with another mapping (its port moved within the range)
        Map<String, List<Integer>> byFlow = new LinkedHashMap<>();
        r.expected.stream().filter(e -> !e.flow.isEmpty() && r.sent.containsKey(e.id) && !e.outputs.get(0).free.isEmpty())
                .forEach(e -> byFlow.computeIfAbsent(e.flow, x -> new ArrayList<>()).add(e.id));
        List<Integer> twice = byFlow.values().stream().filter(l -> l.size() > 1).findFirst().get();
        FrameReference.Expectation second = r.expected.stream().filter(e -> e.id == twice.get(1)).findFirst().get();
        FrameRewrite.Free port = second.outputs.get(0).free.get(0);
        bad = new LinkedHashMap<>(r.sent);
        byte[] moved = bad.get(second.id).clone();
        long v = FrameRewrite.valueAt(moved, port) + 1;
        moved[port.offset] = (byte) (v >> 8);
        moved[port.offset + 1] = (byte) v;
        bad.put(second.id, FrameRewrite.adopt(bad.get(second.id), moved, List.of(port)));
        CaptureComparison.Report remapped = compare(r, bad);
        assertEquals(remapped.json(), 1, remapped.mismatches);
        assertTrue(remapped.json().contains("an earlier packet of it"));
        // windowed: one mapping per flow within a window and replay pass; across them a flow may be mapped anew
        // (its packets further apart than the idle timeout), within them not
        assertEquals(1, compare(r, bad, 1 << 20, -1).mismatches);
        assertEquals(0, compare(r, bad, twice.get(1), -1).mismatches);
        assertEquals(0, compare(r, bad, 1 << 20, twice.get(1)).mismatches);
        assertEquals(1, compare(r, bad, 0, twice.get(1)).mismatches);
        // a port outside the range
        moved[port.offset] = 0;
        moved[port.offset + 1] = 7;
        bad.put(second.id, FrameRewrite.adopt(bad.get(second.id), moved, List.of(port)));
        assertTrue(compare(r, bad).json().contains("outside " + port.lo + "-" + port.hi));
    }

    /**
     * A long trace comes in windows of a third of the chain's shortest idle timeout (Click's TCP_DONE_TIMEOUT,
     * 240 s, for fw1000-napt-lb); a window's SAME_FLOW frames repeat flows of that window only.
     */
    @Test
    public void aLongTraceComesInWindowsWhoseFlowsStayInside() throws Exception {
        ChainSpec chain = chain();
        assertEquals(80_000, FrameGenerator.windowFrames(chain, 1_000_000, 1000));
        assertEquals(0, FrameGenerator.windowFrames(chain, 80_000, 1000));
        assertEquals(0, repeatsOfEarlierWindows(new FrameGenerator(chain, 5, 200), 200));
        assertTrue(repeatsOfEarlierWindows(new FrameGenerator(chain, 5), 200) > 5);  // without windows
    }

    /** SAME_FLOW frames repeating a flow seen in an earlier window of {@code window} frames but not in theirs. */
    private static int repeatsOfEarlierWindows(FrameGenerator gen, int window) {
        java.util.Set<String> earlier = new java.util.HashSet<>();
        java.util.Set<String> inWindow = new java.util.HashSet<>();
        int repeats = 0;
        for (int i = 0; i < 5 * window; i++) {
            FrameGenerator.Frame f = gen.next();
            if (i % window == 0) {
                earlier.addAll(inWindow);
                inWindow.clear();
            }
            String t;
            try {
                t = FrameReference.tuple(FrameCodec.decode(f.bytes).packet);
            } catch (org.metron.synth.packet.OutsideModelException e) {
                continue;  // a cut header: no flow to tell
            }
            if (f.kind == FrameGenerator.Kind.SAME_FLOW && earlier.contains(t) && !inWindow.contains(t)) {
                repeats++;
            }
            inWindow.add(t);
        }
        return repeats;
    }
}
