package org.metron.app.testing;

import org.junit.Test;
import org.metron.drivers.agent.AgentException;
import org.metron.drivers.agent.AgentException.Code;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.metron.app.testing.ContractCalls.failure;
import static org.metron.app.testing.ContractCalls.ok;

/**
 * The fake's black boxes on hugepages, where the real agent starts the program: the refusals the contract's
 * hugepage-less agents cannot show (BlackBoxContract). The real agent's answers to the same programs are what
 * tests/e2e/test_blackbox_e2e.py checks.
 */
public class TestAgentBlackBoxTest {
    private final TestAgent agent = new TestAgent("fake:50051", 2, 0.1).nic("eth0", true, 64);

    private static Path script(String body) throws Exception {
        Path p = Files.createTempFile("metron-nf", ".sh");
        Files.writeString(p, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
        p.toFile().deleteOnExit();
        return p;
    }

    private String refusal(String program) throws Exception {
        AgentException e = failure(agent.deployPipeline(new AgentContractFixtureAccess(agent).pipeline("p",
                BlackBoxContract.box(program))));
        assertEquals(e.getMessage(), Code.FAILED_PRECONDITION, e.code());
        assertTrue(agent.pipelines().isEmpty());
        return e.getMessage().substring(e.getMessage().indexOf("FAILED_PRECONDITION: ") + 21);
    }

    @Test
    public void aProgramThatExitsAtOnceOrNeverAttachesIsRefusedNamingIt() throws Exception {
        assertEquals("black-box NF 'ids' (/bin/false): exited at start (exit 1)", refusal("/bin/false"));
        Path killed = script("kill -9 $$");
        assertEquals("black-box NF 'ids' (" + killed + "): exited at start (signal 9)", refusal(killed.toString()));
        Path sleeper = script("exec sleep 30");
        assertEquals("black-box NF 'ids' (" + sleeper + "): did not attach within 500 ms", refusal(sleeper.toString()));
    }

    @Test
    public void aProgramOnTheNfLibraryAttachesAndIsReportedRunning() throws Exception {
        Path nf = script("# " + FakeBlackBoxes.READY_FD);
        ok(agent.deployPipeline(new AgentContractFixtureAccess(agent).pipeline("p", BlackBoxContract.box(
                nf.toString()))));
        var box = ok(agent.getStats("p")).getGroups(0).getBlackBoxes(0);
        assertEquals("bb", box.getElement());
        assertEquals("ids", box.getNf());
        assertEquals("RUNNING", box.getState());
        assertEquals("CLOSED", box.getOnFailure());
    }

    /** The contract fixture's request builders over the fake. */
    private static final class AgentContractFixtureAccess extends AgentContractFixture {
        private final TestAgent agent;

        AgentContractFixtureAccess(TestAgent agent) {
            this.agent = agent;
            this.nic = "eth0";
        }

        org.metron.agent.v1.DeployPipelineRequest pipeline(String id, String click) {
            return pipeline(id, group("g0", 7, 0, click));
        }

        @Override
        protected org.metron.drivers.agent.AgentClient agent() {
            return agent;
        }

        @Override
        protected void stop() {
        }

        @Override
        protected void restart() {
        }
    }
}
