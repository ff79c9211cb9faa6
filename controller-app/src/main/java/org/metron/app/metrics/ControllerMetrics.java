package org.metron.app.metrics;

import org.metron.agent.v1.BlackBoxStats;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.ServerInfo;
import org.metron.app.metrics.PrometheusText.Type;
import org.metron.app.scaling.BlackBoxStatus;
import org.metron.app.scaling.FlowStateAlert;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingService;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The controller's metrics, the one formatter both hosts serve (ONOS at /onos/metron/metrics, the embedded host
 * there and at /metrics): chains by state, per chain its switch rules and their packets, its placement, scaling
 * operations and their outcomes, flow-state alerts, and whether each server's agent answers. Everything is read
 * from {@link MetronService} and {@link ScalingService} at scrape time (what REST shows), nothing is kept here.
 *
 * <p>Scaling history and flow-state alerts are bounded (the newest {@code ScalingStore.HISTORY} operations per
 * chain, {@code FlowStateAlerts.KEPT} alerts), so they are exported as gauges of what is kept plus the time of
 * the latest, not as counters that would stop counting once the bound is reached.
 */
public final class ControllerMetrics {
    private ControllerMetrics() {
    }

    /** Sums keyed by label values, in label order (a stable exposition). */
    private static Map<List<String>, long[]> keyed() {
        return new TreeMap<>((a, b) -> String.join("\0", a).compareTo(String.join("\0", b)));
    }

    /**
     * @param scaling null where no scaling service runs (its families are then left out)
     */
    public static String scrape(MetronService metron, ScalingService scaling) {
        PrometheusText t = new PrometheusText();
        chains(t, metron.chains());
        rules(t, metron.rules(null));
        placements(t, metron.placements());
        servers(t, metron.servers());
        if (scaling != null) {
            scaling(t, scaling);
            flowStateAlerts(t, scaling.flowStateAlerts());
            blackBoxes(t, scaling.blackBoxes());
        }
        return t.text();
    }

    static void chains(PrometheusText t, Iterable<Chain> chains) {
        Map<ChainState, Integer> byState = new EnumMap<>(ChainState.class);
        for (ChainState s : ChainState.values()) {
            byState.put(s, 0);
        }
        t.family("metron_chain_state", Type.GAUGE, "A chain's lifecycle state (value 1; reason in REST).");
        for (Chain c : chains) {
            byState.merge(c.state(), 1, Integer::sum);
            t.sample("metron_chain_state", 1, "chain", c.id().name(), "state", c.state().name());
        }
        t.family("metron_chains", Type.GAUGE, "Chains per lifecycle state.");
        byState.forEach((s, n) -> t.sample("metron_chains", n, "state", s.name()));
    }

    static void rules(PrometheusText t, List<RuleInfo> rules) {
        // chain, device, role -> {rules, packets, bytes}; packets/bytes -1 when the device keeps no counters
        Map<List<String>, long[]> sums = keyed();
        for (RuleInfo r : rules) {
            long[] s = sums.computeIfAbsent(List.of(r.chainId().name(), r.rule().deviceId().toString(),
                    r.role().name().toLowerCase()), k -> new long[3]);
            s[0]++;
            s[1] += Math.max(0, r.packets());
            s[2] += Math.max(0, r.bytes());
        }
        t.family("metron_chain_switch_rules", Type.GAUGE, "Switch rules Metron installed for a chain, per device "
                + "and role (offload, transit, return, reply).");
        t.family("metron_chain_switch_packets_total", Type.COUNTER, "Packets a chain's switch rules matched, per "
                + "device and role; role offload counts the chain's packets entering the network (a re-tag after a "
                + "split replaces rules, which rate() sees as a counter reset).");
        t.family("metron_chain_switch_bytes_total", Type.COUNTER, "Bytes a chain's switch rules matched.");
        // a device whose entries could not be read: its counters above are unknown (summed as 0), said here
        Map<String, Integer> readable = new TreeMap<>();
        rules.forEach(r -> readable.merge(r.rule().deviceId().toString(), r.deviceRead() ? 1 : 0, Math::min));
        t.family("metron_switch_counters_readable", Type.GAUGE, "1 when a device holding Metron's rules answered "
                + "the read of its flow entries, 0 when not (e.g. ONOS: no master for it): its counters unknown.");
        readable.forEach((dev, ok) -> t.sample("metron_switch_counters_readable", ok, "device", dev));
        sums.forEach((k, s) -> {
            String[] labels = {"chain", k.get(0), "device", k.get(1), "role", k.get(2)};
            t.sample("metron_chain_switch_rules", s[0], labels);
            t.sample("metron_chain_switch_packets_total", s[1], labels);
            t.sample("metron_chain_switch_bytes_total", s[2], labels);
        });
    }

    static void placements(PrometheusText t, Iterable<Placement> placements) {
        t.family("metron_chain_cores", Type.GAUGE, "CPU cores a chain's groups run on.");
        t.family("metron_chain_group_core", Type.GAUGE, "Where a chain's group runs (value 1).");
        for (Placement p : placements) {
            String server = p.server().map(Object::toString).orElse("");
            t.sample("metron_chain_cores", p.cores().size(), "chain", p.chainId().name(), "server", server);
            for (GroupAssignment g : p.groups()) {
                t.sample("metron_chain_group_core", 1, "chain", p.chainId().name(), "group", g.groupId(),
                        "server", server, "core", Integer.toString(g.core()));
            }
        }
    }

    static void servers(PrometheusText t, List<ServerInfo> servers) {
        t.family("metron_server_up", Type.GAUGE, "1 when the server's agent answered the controller, 0 when not "
                + "(REST /servers has the error, e.g. a TLS failure).");
        t.family("metron_server_free_cores", Type.GAUGE, "Cores of a server no chain holds.");
        for (ServerInfo s : servers) {
            t.sample("metron_server_up", s.reachable() ? 1 : 0, "server", s.id().toString(), "agent", s.agent());
            if (s.reachable()) {
                t.sample("metron_server_free_cores", s.freeCores(), "server", s.id().toString());
            }
        }
    }

    static void scaling(PrometheusText t, ScalingService scaling) {
        t.family("metron_scaling_operations", Type.GAUGE, "Scaling operations in a chain's kept history (the "
                + "newest 200), per kind and outcome (done, rolled_back, failed).");
        t.family("metron_scaling_last_operation_timestamp_seconds", Type.GAUGE, "When a chain's latest scaling "
                + "operation of this kind and outcome ended (Unix time).");
        t.family("metron_scaling_last_operation_duration_seconds", Type.GAUGE, "How long a chain's latest scaling "
                + "operation of this kind took from its first step to its last.");
        t.family("metron_scaling_in_progress", Type.GAUGE, "Scaling operations running now, per chain.");
        new TreeMap<>(scaling.history()).forEach((chain, events) -> {
            Map<List<String>, long[]> kinds = keyed();  // kind, outcome -> {count, latest end}
            Map<String, Long> duration = new TreeMap<>();
            for (ScalingEvent e : events) {
                String kind = e.kind().name().toLowerCase();
                long[] k = kinds.computeIfAbsent(List.of(kind, e.outcome().name().toLowerCase()), x -> new long[2]);
                k[0]++;
                k[1] = Math.max(k[1], e.atMs());
                duration.put(kind, e.durationMs());
            }
            kinds.forEach((ko, k) -> {
                String[] labels = {"chain", chain.name(), "kind", ko.get(0), "outcome", ko.get(1)};
                t.sample("metron_scaling_operations", k[0], labels);
                t.sample("metron_scaling_last_operation_timestamp_seconds", k[1] / 1000.0, labels);
            });
            duration.forEach((kind, ms) -> t.sample("metron_scaling_last_operation_duration_seconds", ms / 1000.0,
                    "chain", chain.name(), "kind", kind));
        });
        Map<ChainId, Integer> running = new TreeMap<>();
        scaling.inProgress().forEach(op -> running.merge(op.chain(), 1, Integer::sum));
        running.forEach((chain, n) -> t.sample("metron_scaling_in_progress", n, "chain", chain.name()));
    }

    static void flowStateAlerts(PrometheusText t, List<FlowStateAlert> kept) {
        t.family("metron_flow_state_alerts", Type.GAUGE, "Flow-state alerts kept (the newest 200 of all chains): "
                + "a stateful element's table shed flows, per chain, group, server and element.");
        t.family("metron_flow_state_shed_flows", Type.GAUGE, "Flows shed in the kept alerts, per element and "
                + "reason (evicted, refused, growth_failed); the agent's metron_agent_flow_table_*_total count all.");
        t.family("metron_flow_state_last_alert_timestamp_seconds", Type.GAUGE, "When an element's latest "
                + "flow-state alert was raised (Unix time).");
        Map<List<String>, long[]> alerts = keyed();
        for (FlowStateAlert a : kept) {
            long[] s = alerts.computeIfAbsent(List.of(a.chain().name(), a.group(), a.server().toString(),
                    a.element()), k -> new long[5]);
            s[0]++;
            s[1] += a.evicted();
            s[2] += a.refused();
            s[3] += a.growthFailures();
            s[4] = Math.max(s[4], a.atMs());
        }
        alerts.forEach((k, s) -> {
            String[] labels = {"chain", k.get(0), "group", k.get(1), "server", k.get(2), "element", k.get(3)};
            t.sample("metron_flow_state_alerts", s[0], labels);
            String[] reasons = {"evicted", "refused", "growth_failed"};
            for (int i = 0; i < reasons.length; i++) {
                t.sample("metron_flow_state_shed_flows", s[i + 1], "chain", k.get(0), "group", k.get(1),
                        "server", k.get(2), "element", k.get(3), "reason", reasons[i]);
            }
            t.sample("metron_flow_state_last_alert_timestamp_seconds", s[4] / 1000.0, labels);
        });
    }

    /** The chains' black-box NFs as their agents last reported them (docs/blackbox.md). */
    static void blackBoxes(PrometheusText t, List<BlackBoxStatus> boxes) {
        t.family("metron_blackbox_up", Type.GAUGE, "A chain's black-box NF, per group: 1 while RUNNING, 0 otherwise "
                + "(state label: STARTING, RUNNING, RESTARTING, FAILED).");
        t.family("metron_blackbox_restarts_total", Type.COUNTER, "Instances of the black-box NF started after the first.");
        t.family("metron_blackbox_packets_total", Type.COUNTER, "Packets of the black-box NF by what became of them: sent "
                + "(handed to it), returned (it passed them back), nf_dropped (its verdict), ring_full (not handed "
                + "over: its input was full), bypassed (fail-open while down), failed_closed (fail-closed drops), nf_lost (held by "
                + "an instance when it died: gone with it).");
        t.family("metron_blackbox_sleeps_total", Type.COUNTER, "IDLE WAKE: times the black-box NF slept on its empty "
                + "input (all its instances).");
        t.family("metron_blackbox_wakeups_total", Type.COUNTER, "IDLE WAKE: times a producer (the agent or the NF "
                + "before it) woke the sleeping black-box NF.");
        for (BlackBoxStatus b : boxes) {
            BlackBoxStats s = b.stats();
            String[] labels = {"chain", b.chain().name(), "group", b.group(), "server", b.server().toString(), "nf",
                    s.getNf(), "mode", s.getMode()};
            String[] withState = java.util.Arrays.copyOf(labels, labels.length + 2);
            withState[labels.length] = "state";
            withState[labels.length + 1] = s.getState();
            t.sample("metron_blackbox_up", "RUNNING".equals(s.getState()) ? 1 : 0, withState);
            t.sample("metron_blackbox_restarts_total", s.getRestarts(), labels);
            t.sample("metron_blackbox_sleeps_total", s.getNfSleeps(), labels);
            t.sample("metron_blackbox_wakeups_total", s.getNfWakeups(), labels);
            long[] counts = {s.getSent(), s.getReturned(), s.getNfDropped(), s.getRingFull(), s.getBypassed(),
                    s.getFailedClosed(), s.getNfLost()};
            String[] what = {"sent", "returned", "nf_dropped", "ring_full", "bypassed", "failed_closed", "nf_lost"};
            for (int i = 0; i < what.length; i++) {
                String[] l = java.util.Arrays.copyOf(labels, labels.length + 2);
                l[labels.length] = "what";
                l[labels.length + 1] = what[i];
                t.sample("metron_blackbox_packets_total", counts[i], l);
            }
        }
    }
}
