package org.metron.app.testing;

import org.metron.drivers.agent.AgentClient;

/**
 * {@link AgentContract} against {@link TestAgent}, set up as {@link RealAgentContractTest}'s agent is: two worker
 * cores, a fanout-steered NIC with a rule table, flow memory for tables of declared capacity, no hugepages.
 */
public class TestAgentContractTest extends AgentContract {
    private final TestAgent agent = new TestAgent("fake:50051", 2, 0.1).nic("eth0", true, 64)
            .flowMemory(64L << 20, 245).hugepages(false);

    @Override
    protected AgentClient agent() {
        return agent;
    }

    @Override
    protected void stop() {
        agent.unreachable(true);
    }

    @Override
    protected void restart() {
        agent.restart().unreachable(false);
    }
}
