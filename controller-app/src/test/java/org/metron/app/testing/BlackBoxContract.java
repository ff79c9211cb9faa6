package org.metron.app.testing;

import org.junit.Test;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.agent.AgentException.Code;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

import static org.junit.Assert.assertEquals;
import static org.metron.app.testing.ContractCalls.failure;
import static org.metron.app.testing.ContractCalls.ok;

/**
 * {@link AgentContract}'s cases for black-box NFs (docs/blackbox.md): a deploy whose {@code BlackBoxNF} cannot
 * start is FAILED_PRECONDITION with the doc's message and leaves nothing of the pipeline, and pipelines deployed
 * before keep running. They need an agent built with BlackBoxNF (agent/src/elements/blackbox_nf.cc, registered in
 * registry.cc): on an agent without it the real one answers INVALID_ARGUMENT (unknown element class) and these
 * cases fail. The contract's agents run without hugepages (RealAgent starts the real one with --no-huge, the fake
 * is set so), so a program that exists and is executable is refused for that; an NF that exits at start or never
 * attaches needs an agent on hugepages: TestAgentBlackBoxTest holds the fake to those messages and
 * tests/e2e/test_blackbox_e2e.py the real agent.
 */
public abstract class BlackBoxContract extends AgentContractFixture {
    /** A group whose one black box runs {@code program} in RING mode. */
    protected static String box(String program) {
        return "input -> bb :: BlackBoxNF(NAME ids, PROGRAM " + program + ", ARGS \"--drop-port 23\", MODE RING, "
                + "ON_FAILURE CLOSED, RING_SIZE 1024, ATTACH_TIMEOUT 500) -> [0]output;";
    }

    private void refused(String program, String why) throws Exception {
        if (running().isEmpty()) {
            deploy("other", group("g0", 7, workers.get(0), PASS));
        }
        AgentException e = failure(agent().deployPipeline(pipeline("p", group("g0", 8, workers.get(1),
                box(program)))));
        assertEquals(e.getMessage(), Code.FAILED_PRECONDITION, e.code());
        assertEquals(e.getMessage().substring(e.getMessage().indexOf("FAILED_PRECONDITION: ") + 21),
                "black-box NF 'ids' (" + program + "): " + why);
        // nothing of the refused pipeline stays; the one deployed before runs on
        assertEquals(Set.of("other/g0 tag 7 core " + workers.get(0)), running());
        deploy("p", group("g0", 8, workers.get(1), PASS)); // its id and tag are free
        ok(agent().removePipeline("p"));
    }

    @Test
    public void aBlackBoxProgramThatDoesNotExistIsNotFound() throws Exception {
        refused("/nonexistent/metron-nf-fwd", "not found");
    }

    @Test
    public void aBlackBoxProgramThatIsNoExecutableIsNotExecutable() throws Exception {
        Path plain = Files.createTempFile("metron-nf", ".txt");
        try {
            refused(plain.toString(), "not executable");
            refused("/tmp", "not executable");
        } finally {
            Files.delete(plain);
        }
    }

    @Test
    public void aRingBlackBoxOnAnAgentWithoutHugepagesIsRefusedForThat() throws Exception {
        refused("/bin/true", "MODE RING needs the agent on hugepages as the DPDK primary (multi-process)");
    }
}
