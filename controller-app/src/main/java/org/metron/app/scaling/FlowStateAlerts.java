package org.metron.app.scaling;

import org.metron.agent.v1.FlowStateStats;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.Stats;
import org.metron.app.api.ChainId;
import org.onosproject.net.DeviceId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Turns the agents' cumulative flow-state counters into alerts: between two load reports of a server, every
 * element whose evicted, refused or failed-growth count rose is reported (logged as a warning and kept, the most
 * recent {@link #KEPT}, for REST, CLI, GUI and dashboard). Counters that went down (an agent restart) start over.
 */
public final class FlowStateAlerts {
    public static final int KEPT = 200;
    private static final Logger log = LoggerFactory.getLogger(FlowStateAlerts.class);

    private final Deque<FlowStateAlert> recent = new ArrayDeque<>();

    /** Compares two consecutive reports of one server; records and answers the alerts. */
    public List<FlowStateAlert> observe(DeviceId server, Stats before, Stats now, long atMs) {
        Map<String, FlowStateStats> previous = new HashMap<>();
        for (GroupStats g : before.getGroupsList()) {
            g.getFlowStateList().forEach(f -> previous.put(key(g, f), f));
        }
        List<FlowStateAlert> out = new ArrayList<>();
        for (GroupStats g : now.getGroupsList()) {
            for (FlowStateStats f : g.getFlowStateList()) {
                FlowStateStats p = previous.get(key(g, f));
                if (p == null) {
                    continue;
                }
                long evicted = rise(p.getEvicted(), f.getEvicted());
                long refused = rise(p.getRefused(), f.getRefused());
                long growth = rise(p.getGrowthFailures(), f.getGrowthFailures());
                if (evicted + refused + growth > 0) {
                    out.add(new FlowStateAlert(atMs, ChainId.of(g.getPipelineId()), g.getGroupId(), server,
                            f.getElement(), evicted, refused, growth, f.getFlows(), f.getCapacity()));
                }
            }
        }
        synchronized (recent) {
            for (FlowStateAlert a : out) {
                log.warn("Flow state shed: {}", a);
                recent.addLast(a);
                if (recent.size() > KEPT) {
                    recent.removeFirst();
                }
            }
        }
        return out;
    }

    /** The most recent alerts, oldest first. */
    public List<FlowStateAlert> recent() {
        synchronized (recent) {
            return List.copyOf(recent);
        }
    }

    /** The most recent alerts of one chain, oldest first. */
    public List<FlowStateAlert> recent(ChainId chain) {
        return recent().stream().filter(a -> a.chain().equals(chain)).collect(Collectors.toList());
    }

    private static String key(GroupStats g, FlowStateStats f) {
        return g.getPipelineId() + "/" + g.getGroupId() + "/" + f.getElement();
    }

    private static long rise(long before, long now) {
        return now >= before ? now - before : now;
    }
}
