package org.metron.synth.check;

import org.metron.synth.ChainSpec;

/** Lets tests in other packages build one-NF chains and run the all-target check. */
public final class SmallChainsTestAccess {
    private SmallChainsTestAccess() {
    }

    public static ChainSpec chain(String name, String... clicks) {
        return SmallChainsTest.chain(name, clicks);
    }

    public static void check(ChainSpec c, long packets) {
        SmallChainsTest.check(c, packets);
    }
}
