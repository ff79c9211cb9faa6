package org.metron.embedded.tools;

import com.google.protobuf.util.JsonFormat;
import org.metron.agent.v1.Stats;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;

/**
 * Prints one agent's statistics as JSON (protobuf's JSON mapping) through the drivers' gRPC client: what the
 * demo and the end-to-end tests read per-core and per-class counters from. Usage: AgentStats HOST:PORT [PIPELINE]
 */
public final class AgentStats {
    private AgentStats() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: AgentStats HOST:PORT [PIPELINE]");
            System.exit(2);
        }
        try (GrpcAgentClient agent = GrpcAgentClient.connect(AgentEndpoint.parse(args[0]))) {
            Stats s = agent.getStats(args.length > 1 ? args[1] : "").get();
            System.out.println(JsonFormat.printer().includingDefaultValueFields().print(s));
        }
    }
}
