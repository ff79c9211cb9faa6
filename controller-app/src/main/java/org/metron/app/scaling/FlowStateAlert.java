package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;

import java.util.Objects;

/**
 * A stateful element shed flows (docs/contracts.md: FlowStateStats): since the previous load report its table,
 * full, evicted idle flows or refused new ones, or could not grow for lack of memory. Click's elements would have
 * shed them too only with the same declared capacity; an operator sees each such report. Immutable.
 */
public final class FlowStateAlert {
    private final long atMs;
    private final ChainId chain;
    private final String group;
    private final DeviceId server;
    private final String element;
    private final long evicted;
    private final long refused;
    private final long growthFailures;
    private final long flows;
    private final long capacity;

    /**
     * @param evicted        flows evicted since the previous report
     * @param refused        new flows refused since the previous report
     * @param growthFailures growths the memory could not hold since the previous report
     * @param flows          flows held at this report
     * @param capacity       flows the table holds before it grows or sheds
     */
    public FlowStateAlert(long atMs, ChainId chain, String group, DeviceId server, String element, long evicted,
                          long refused, long growthFailures, long flows, long capacity) {
        this.atMs = atMs;
        this.chain = Objects.requireNonNull(chain);
        this.group = Objects.requireNonNull(group);
        this.server = Objects.requireNonNull(server);
        this.element = Objects.requireNonNull(element);
        this.evicted = evicted;
        this.refused = refused;
        this.growthFailures = growthFailures;
        this.flows = flows;
        this.capacity = capacity;
    }

    public long atMs() {
        return atMs;
    }

    public ChainId chain() {
        return chain;
    }

    public String group() {
        return group;
    }

    public DeviceId server() {
        return server;
    }

    public String element() {
        return element;
    }

    public long evicted() {
        return evicted;
    }

    public long refused() {
        return refused;
    }

    public long growthFailures() {
        return growthFailures;
    }

    public long flows() {
        return flows;
    }

    public long capacity() {
        return capacity;
    }

    /** One line for logs and consoles. */
    @Override
    public String toString() {
        return "chain " + chain + " group " + group + " element " + element + " on " + server + ": " + evicted
                + " flows evicted, " + refused + " new flows refused" + (growthFailures > 0 ? ", " + growthFailures
                + " growths failed (memory)" : "") + " (" + flows + " of " + capacity + " flows held)";
    }
}
