package org.metron.synth.core;

import java.math.BigDecimal;
import java.util.Objects;

/**
 * A rewriter's idle timeouts per flow state, in seconds, as Click's IPRewriter keeps them (the agent's IPRewriter
 * and SynthRewriter follow each flow's TCP/UDP progress the same way). Immutable.
 */
public final class IdleTimeouts {
    /** Click's defaults: TCP_TIMEOUT 24 h, TCP_NODATA_TIMEOUT 300 s, TCP_DONE_TIMEOUT 240 s, UDP 300 s. */
    public static final IdleTimeouts CLICK_DEFAULTS = new IdleTimeouts(86400, 300, 240, 300, 300);

    /** TCP with payload seen both ways (TCP_TIMEOUT / TIMEOUT). */
    public final double tcp;
    /** TCP without payload both ways (TCP_NODATA_TIMEOUT). */
    public final double tcpNodata;
    /** TCP after FIN both ways or RST (TCP_DONE_TIMEOUT). */
    public final double tcpDone;
    /** UDP (UDP_TIMEOUT). */
    public final double udp;
    /** UDP with 3+ packets, one a reply (UDP_STREAMING_TIMEOUT). */
    public final double udpStreaming;

    public IdleTimeouts(double tcp, double tcpNodata, double tcpDone, double udp, double udpStreaming) {
        this.tcp = tcp;
        this.tcpNodata = tcpNodata;
        this.tcpDone = tcpDone;
        this.udp = udp;
        this.udpStreaming = udpStreaming;
    }

    /**
     * Per state the shorter of the two: the timeouts of one entry holding a flow's mappings of two rewriters.
     * Click drops a flow's mapping in each rewriter on its own; once the first is gone the flow's next packet is
     * a new flow there (a new mapping, possibly another port or backend), so the fused entry must go then too.
     */
    public IdleTimeouts shortest(IdleTimeouts o) {
        return new IdleTimeouts(Math.min(tcp, o.tcp), Math.min(tcpNodata, o.tcpNodata), Math.min(tcpDone, o.tcpDone),
                Math.min(udp, o.udp), Math.min(udpStreaming, o.udpStreaming));
    }

    /** The shortest of all states. */
    public double shortest() {
        return Math.min(Math.min(Math.min(tcp, tcpNodata), Math.min(tcpDone, udp)), udpStreaming);
    }

    /** The SynthRewriter keywords giving every state's timeout. */
    public String keywords() {
        return "TCP_TIMEOUT " + secs(tcp) + ", TCP_NODATA_TIMEOUT " + secs(tcpNodata) + ", TCP_DONE_TIMEOUT "
                + secs(tcpDone) + ", UDP_TIMEOUT " + secs(udp) + ", UDP_STREAMING_TIMEOUT " + secs(udpStreaming);
    }

    private static String secs(double s) {
        return BigDecimal.valueOf(s).stripTrailingZeros().toPlainString();
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof IdleTimeouts)) {
            return false;
        }
        IdleTimeouts t = (IdleTimeouts) o;
        return tcp == t.tcp && tcpNodata == t.tcpNodata && tcpDone == t.tcpDone && udp == t.udp
                && udpStreaming == t.udpStreaming;
    }

    @Override
    public int hashCode() {
        return Objects.hash(tcp, tcpNodata, tcpDone, udp, udpStreaming);
    }

    @Override
    public String toString() {
        return keywords();
    }
}
