package org.metron.app.impl;

import org.junit.Test;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.OffloadRule;
import org.metron.synth.RuleAction;
import org.metron.synth.RuleMatch;
import org.metron.synth.SynthStats;
import org.metron.synth.TargetProfile;
import org.metron.synth.TrafficClass;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.Assert.assertEquals;

/** The units a split keeps together: a reply class with the forward classes it answers (docs/scaling.md#replies). */
public class ReplyTrafficTest {
    /** Forward classes 0..3 ("napt"), class 4 dropped, reply classes 5..7 ("napt"). */
    private static CompiledChain chain(Map<Integer, List<Integer>> answers) {
        List<TrafficClass> classes = new ArrayList<>();
        for (int c = 0; c < 4; c++) {
            classes.add(new TrafficClass(c, List.of("udp dst port " + c), 0, List.of(), false, "napt", "napt"));
        }
        classes.add(new TrafficClass(4, List.of("-"), -1, List.of(), false, "", "deny"));
        for (int r = 5; r < 8; r++) {
            classes.add(new TrafficClass(r, List.of("udp src port " + r), 1, List.of(), false, "napt",
                    ReplyTraffic.REPLY_OPERATIONS_PREFIX + "restore; egress 1"));
        }
        return new CompiledChain("c", TargetProfile.OPENFLOW13, classes,
                List.of(new ClassGroup(0, List.of(0, 1, 2, 3, 5, 6, 7), "", "napt", false)), List.of(),
                List.of(OffloadRule.of(1, RuleMatch.builder().build(), RuleAction.toServer(5))), List.of("o0", "o1"),
                new SynthStats(8, 8, 1, 0, Map.of()), answers);
    }

    @Test
    public void aReplyClassJoinsTheForwardClassesItAnswersTransitively() {
        ReplyTraffic r = ReplyTraffic.of(chain(Map.of(5, List.of(0), 6, List.of(1, 2), 7, List.of(2))));
        assertEquals(List.of(List.of(0, 5), List.of(1, 2, 6, 7), List.of(3)), r.units(List.of(0, 1, 2, 3, 5, 6, 7)));
        assertEquals(List.of(1, 2), r.answers(6));
        assertEquals(List.of(), r.answers(0));
        // a split-off half: only its own classes count
        assertEquals(List.of(List.of(1, 2, 6, 7)), r.units(List.of(1, 2, 6, 7)));
    }

    @Test
    public void aReplyClassTheSynthesizerSaidNothingAboutAnswersEveryClassOfItsOperation() {
        ReplyTraffic r = ReplyTraffic.of(chain(Map.of(5, List.of(0), 6, List.of(1))));
        assertEquals(List.of(0, 1, 2, 3), r.answers(7));
        assertEquals(List.of(List.of(0, 1, 2, 3, 5, 6, 7)), r.units(List.of(0, 1, 2, 3, 5, 6, 7)));
    }

    @Test
    public void aReplyClassAnsweringNothingMovesAlone() {
        ReplyTraffic r = ReplyTraffic.of(chain(Map.of(5, List.of(0), 6, List.of(), 7, List.of(3))));
        assertEquals(List.of(List.of(0, 5), List.of(1), List.of(2), List.of(3, 7), List.of(6)),
                r.units(List.of(0, 1, 2, 3, 5, 6, 7)));
    }
}
