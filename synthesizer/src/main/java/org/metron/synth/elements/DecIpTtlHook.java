package org.metron.synth.elements;

/** Lets the graph builder tell a DecIPTTL that its expired-packet output is connected. */
public final class DecIpTtlHook {
    private DecIpTtlHook() {
    }

    /** Called for every connection from output 1. */
    public static void expiredPortConnected(Element e) {
        if (e instanceof DecIpTtl) {
            ((DecIpTtl) e).hasExpiredPort();
        }
    }
}
