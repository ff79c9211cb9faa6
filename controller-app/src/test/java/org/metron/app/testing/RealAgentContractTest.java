package org.metron.app.testing;

import org.junit.AfterClass;
import org.junit.BeforeClass;
import org.metron.drivers.agent.AgentClient;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * {@link AgentContract} against a real metron-agent process (two worker cores; a veth end it steers by tag with
 * AF_PACKET fanout, the NIC with a rule table; a DPDK null vdev), through the controller's own gRPC client,
 * which outlives the process across {@link #stop()}/{@link #restart()} as the server registry's does. Like the
 * other real-agent tests it fails, never skips, when agent/build/metron-agent is missing.
 */
public class RealAgentContractTest extends AgentContract {
    private static TestVeth veth;
    private static RealAgent process;
    private static GrpcAgentClient client;
    private static int port;

    @BeforeClass
    public static void startAgent() throws Exception {
        veth = TestVeth.create("mct");
        process = RealAgent.startOnPort("contract", 0, "--fanout", veth.agentSide());
        String target = process.client().target();
        port = Integer.parseInt(target.substring(target.lastIndexOf(':') + 1));
        client = GrpcAgentClient.connect(AgentEndpoint.builder().host("127.0.0.1").port(port)
                .deadline(Duration.ofSeconds(10)).build());
    }

    @AfterClass
    public static void stopAgent() throws Exception {
        if (client != null) {
            client.close();
        }
        if (process != null) {
            process.close();
        }
        if (veth != null) {
            veth.close();
        }
    }

    @Override
    protected AgentClient agent() {
        return client;
    }

    @Override
    protected void stop() throws Exception {
        process.kill();
    }

    @Override
    protected void restart() throws Exception {
        process.close();
        process = RealAgent.startOnPort("contract", port, "--fanout", veth.agentSide());
        // the controller's client reconnects on its own; wait until it has
        client.health().get(30, TimeUnit.SECONDS);
    }
}
