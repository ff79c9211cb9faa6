package org.metron.embedded.tools;

import com.google.protobuf.util.JsonFormat;
import org.metron.agent.v1.Stats;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;

/**
 * Prints one agent's statistics as JSON (protobuf's JSON mapping) through the drivers' gRPC client: what the
 * demo and the end-to-end tests read per-core and per-class counters from.
 * Usage: AgentStats HOST:PORT [PIPELINE] [--tls CA.pem CERT.pem KEY.pem] (mutual TLS, for an agent started with
 * --tls-*).
 */
public final class AgentStats {
    private AgentStats() {
    }

    public static void main(String[] args) throws Exception {
        java.util.List<String> a = new java.util.ArrayList<>(java.util.Arrays.asList(args));
        int tls = a.indexOf("--tls");
        if (a.isEmpty() || tls == 0 || (tls > 0 && a.size() < tls + 4)) {
            System.err.println("usage: AgentStats HOST:PORT [PIPELINE] [--tls CA.pem CERT.pem KEY.pem]");
            System.exit(2);
        }
        AgentEndpoint endpoint = AgentEndpoint.parse(a.get(0));
        if (tls > 0) {
            endpoint = new org.metron.embedded.net.AgentTls(java.nio.file.Paths.get(a.get(tls + 1)),
                    java.nio.file.Paths.get(a.get(tls + 2)), java.nio.file.Paths.get(a.get(tls + 3)), "--tls")
                    .apply(endpoint);
            a.subList(tls, tls + 4).clear();
        }
        try (GrpcAgentClient agent = GrpcAgentClient.connect(endpoint)) {
            Stats s = agent.getStats(a.size() > 1 ? a.get(1) : "").get();
            System.out.println(JsonFormat.printer().includingDefaultValueFields().print(s));
        }
    }
}
