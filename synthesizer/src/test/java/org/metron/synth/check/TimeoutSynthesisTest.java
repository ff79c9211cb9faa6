package org.metron.synth.check;

import org.junit.Test;
import org.metron.synth.ChainSpec;

/**
 * The chain's rewriters' idle timeouts (Click's IPRewriter keywords) reach the group configs: each SynthRewriter
 * states every flow state's timeout, Click's defaults where the NF gives none, and per state the shortest of the
 * rewriters it collapses (its one entry must go when the first of Click's mappings would). The synthesized chain
 * stays equivalent (the checker compares the timeouts as part of each class's stateful operation).
 */
public class TimeoutSynthesisTest {
    private static final String DEFAULTS =
            "TCP_TIMEOUT 86400, TCP_NODATA_TIMEOUT 300, TCP_DONE_TIMEOUT 240, UDP_TIMEOUT 300, UDP_STREAMING_TIMEOUT 300";

    private static String napt(String keywords) {
        return CapacitySynthesisTest.napt(keywords);
    }

    private static String lb(String keywords) {
        return CapacitySynthesisTest.lb(keywords);
    }

    /** Every group's SynthRewriter ends with one of {@code allowed}, some with {@code required}; equivalent. */
    private static void rewritersKeep(ChainSpec c, String required, String... allowed) {
        CapacitySynthesisTest.rewritersDeclare(c, args -> {
            int from = args.indexOf("TCP_TIMEOUT ");
            return from < 0 ? "(no timeouts)" : args.substring(from);
        }, required, allowed);
    }

    @Test
    public void declaredTimeoutsReachTheGroupConfig() {
        String declared = "TCP_TIMEOUT 86400, TCP_NODATA_TIMEOUT 120, TCP_DONE_TIMEOUT 240, UDP_TIMEOUT 30, "
                + "UDP_STREAMING_TIMEOUT 30";
        rewritersKeep(SmallChainsTest.chain("napt-t", napt(", TCP_TIMEOUT 86400, TCP_NODATA_TIMEOUT 2min, "
                + "UDP_TIMEOUT 30")), declared, declared);
        String old = "TCP_TIMEOUT 3600, TCP_NODATA_TIMEOUT 300, TCP_DONE_TIMEOUT 0.5, UDP_TIMEOUT 300, "
                + "UDP_STREAMING_TIMEOUT 600";
        rewritersKeep(SmallChainsTest.chain("napt-t2", napt(", TIMEOUT 1h, TCP_DONE_TIMEOUT 500ms, "
                + "UDP_STREAMING_TIMEOUT 600")), old, old);
    }

    @Test
    public void withoutDeclaredTimeoutsClicksDefaultsAreEmitted() {
        rewritersKeep(SmallChainsTest.chain("fw-napt-lb-t", SmallChainsTest.FW, napt(""), lb("")), DEFAULTS,
                DEFAULTS);
    }

    @Test
    public void collapsedRewritersKeepTheShortestTimeoutPerState() {
        // NAPT: TCP 1 h, UDP 60 s; LB: TCP_NODATA 100 s, UDP_STREAMING 30 s. Classes through both take the
        // shorter per state; classes the LB passes untouched keep the NAPT's alone.
        String both = "TCP_TIMEOUT 3600, TCP_NODATA_TIMEOUT 100, TCP_DONE_TIMEOUT 240, UDP_TIMEOUT 60, "
                + "UDP_STREAMING_TIMEOUT 30";
        String naptOnly = "TCP_TIMEOUT 3600, TCP_NODATA_TIMEOUT 300, TCP_DONE_TIMEOUT 240, UDP_TIMEOUT 60, "
                + "UDP_STREAMING_TIMEOUT 60";
        rewritersKeep(SmallChainsTest.chain("fw-napt-lb-t2", SmallChainsTest.FW,
                napt(", TCP_TIMEOUT 3600, UDP_TIMEOUT 60"),
                lb(", TCP_NODATA_TIMEOUT 100, UDP_STREAMING_TIMEOUT 30")), both, both, naptOnly);
    }
}
