package org.metron.embedded;

import org.metron.embedded.net.AgentTls;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/** Command-line options of the embedded host (immutable). */
public final class HostOptions {
    public static final String USAGE = "usage: metron-host --state RUN/ID/state.json [--data DIR] "
            + "[--openflow HOST:PORT] [--http HOST:PORT] [--switch-wait-ms MS] [--agent-tls-* FILE]\n"
            + "       [--failover-groups on|off] [--reroute-delay-ms MS]\n"
            + "  --state     the state file `topologies/topo up` printed (network, servers, agents)\n"
            + "  --data      durable stores and users.properties (default: run/host-data)\n"
            + "  --openflow  where switches connect (default 127.0.0.1:6653)\n"
            + "  --http      REST API under /onos/metron and dashboard under /metron/ui (default 127.0.0.1:8181)\n"
            + "  --switch-wait-ms  how long to wait for every switch at start (default 15000)\n"
            + "  --failover-groups  arm link backups in the switches as fast-failover groups (default on)\n"
            + "  --reroute-delay-ms  wait this long before acting on a port or switch failure (default 0; tests and\n"
            + "              benchmarks show what the switches alone do)\n"
            + "  --agent-tls-trust CA.pem --agent-tls-cert CERT.pem --agent-tls-key KEY.pem  mutual TLS to agents\n"
            + "              whose topology entry names no TLS files of its own (all three together; PKCS#8 key)";

    public final Path state;
    public final Path data;
    public final InetSocketAddress openflow;
    public final InetSocketAddress http;
    public final long switchWaitMs;
    /** TLS files for agents whose topology entry has none (--agent-tls-*). */
    public final Optional<AgentTls> agentTls;
    /** Whether link backups are armed as fast-failover groups (--failover-groups). */
    public final boolean failoverGroups;
    /** How long the host waits before rerouting after a failure (--reroute-delay-ms). */
    public final long rerouteDelayMs;

    private HostOptions(Path state, Path data, InetSocketAddress openflow, InetSocketAddress http, long switchWaitMs,
                        Optional<AgentTls> agentTls, boolean failoverGroups, long rerouteDelayMs) {
        this.failoverGroups = failoverGroups;
        this.rerouteDelayMs = rerouteDelayMs;
        this.state = state;
        this.data = data;
        this.openflow = openflow;
        this.http = http;
        this.switchWaitMs = switchWaitMs;
        this.agentTls = agentTls;
    }

    /** Parses argv; IllegalArgumentException names the bad option. */
    public static HostOptions parse(String... args) {
        Path state = null;
        Path data = Paths.get("run/host-data");
        InetSocketAddress openflow = new InetSocketAddress("127.0.0.1", 6653);
        InetSocketAddress http = new InetSocketAddress("127.0.0.1", 8181);
        long wait = 15_000;
        Map<String, Path> tls = new HashMap<>();
        boolean groups = true;
        long rerouteDelay = 0;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException("option " + a + " needs a value\n" + USAGE);
            }
            String v = args[++i];
            switch (a) {
                case "--state":
                    state = Paths.get(v);
                    break;
                case "--data":
                    data = Paths.get(v);
                    break;
                case "--openflow":
                    openflow = address(a, v);
                    break;
                case "--http":
                    http = address(a, v);
                    break;
                case "--switch-wait-ms":
                    wait = millis(a, v);
                    break;
                case "--reroute-delay-ms":
                    rerouteDelay = millis(a, v);
                    break;
                case "--failover-groups":
                    if (!v.equals("on") && !v.equals("off")) {
                        throw new IllegalArgumentException("--failover-groups: '" + v + "' is neither on nor off");
                    }
                    groups = v.equals("on");
                    break;
                case "--agent-tls-trust":
                case "--agent-tls-cert":
                case "--agent-tls-key":
                    tls.put(a, Paths.get(v));
                    break;
                default:
                    throw new IllegalArgumentException("unknown option '" + a + "'\n" + USAGE);
            }
        }
        if (state == null) {
            throw new IllegalArgumentException("--state is required\n" + USAGE);
        }
        Optional<AgentTls> agentTls = Optional.empty();
        if (!tls.isEmpty()) {
            for (String needed : List.of("--agent-tls-trust", "--agent-tls-cert", "--agent-tls-key")) {
                if (!tls.containsKey(needed)) {
                    throw new IllegalArgumentException(needed + " missing: --agent-tls-trust, --agent-tls-cert and "
                            + "--agent-tls-key go together");
                }
            }
            agentTls = Optional.of(new AgentTls(tls.get("--agent-tls-trust"), tls.get("--agent-tls-cert"),
                    tls.get("--agent-tls-key"), "--agent-tls-*"));
        }
        return new HostOptions(state, data, openflow, http, wait, agentTls, groups, rerouteDelay);
    }

    private static long millis(String option, String v) {
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + ": '" + v + "' is not a number");
        }
    }

    private static InetSocketAddress address(String option, String v) {
        int colon = v.lastIndexOf(':');
        try {
            return new InetSocketAddress(v.substring(0, colon), Integer.parseInt(v.substring(colon + 1)));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(option + ": '" + v + "' is not HOST:PORT");
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof HostOptions && Objects.equals(state, ((HostOptions) o).state)
                && Objects.equals(data, ((HostOptions) o).data) && openflow.equals(((HostOptions) o).openflow)
                && http.equals(((HostOptions) o).http) && switchWaitMs == ((HostOptions) o).switchWaitMs
                && agentTls.equals(((HostOptions) o).agentTls) && failoverGroups == ((HostOptions) o).failoverGroups
                && rerouteDelayMs == ((HostOptions) o).rerouteDelayMs;
    }

    @Override
    public int hashCode() {
        return Objects.hash(state, data, openflow, http, switchWaitMs, agentTls, failoverGroups, rerouteDelayMs);
    }
}
