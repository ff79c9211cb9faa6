package org.metron.app.impl;

import org.junit.Test;
import org.metron.app.api.ChainId;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.testing.Fixtures;
import org.onosproject.net.DeviceId;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

/**
 * An owner that stops after committing switch rules and before recording them: the next owner finds them in the
 * chain's record (the intent is written before the commit) and removes them with the chain. Without the intent
 * they stayed on the switches for good, steering traffic nobody accounts for.
 */
public class StoppedOwnerRulesTest {
    private static final DeviceId S3 = DeviceId.deviceId(TwoPathWorld.S3);

    /** The owner's JVM stopping (not an exception any code path handles). */
    private static final class Stopped extends Error {
        private static final long serialVersionUID = 1L;
    }

    /** Switches through which the owner stops right after its rules on {@code at} went live. */
    private static SwitchProgrammer stoppingAfter(SwitchProgrammer s, DeviceId at) {
        return new SwitchProgrammer() {
            @Override
            public CompletableFuture<Void> install(DeviceId device, List<FlowRule> rules) {
                CompletableFuture<Void> done = s.install(device, rules);
                if (device.equals(at)) {
                    done.join();
                    throw new Stopped();
                }
                return done;
            }

            @Override
            public CompletableFuture<Void> remove(DeviceId device, Collection<FlowRule> rules) {
                return s.remove(device, rules);
            }

            @Override
            public Collection<FlowEntry> entries(DeviceId device) {
                return s.entries(device);
            }

            @Override
            public int ruleCount(DeviceId device) {
                return s.ruleCount(device);
            }
        };
    }

    @Test
    public void rulesARerouteCommittedBeforeItsOwnerStoppedGoWithTheChain() {
        TwoPathWorld w = new TwoPathWorld();
        ChainId id = ChainId.of("r");
        w.manager.submit(TwoPathWorld.json("r"));
        assertEquals(Fixtures.D2, w.manager.placement(id).get().offloadDevice().get());
        Duration t = Duration.ofSeconds(2);
        SwitchProgrammer stopping = stoppingAfter(w.switches, S3);
        ChainManager owner = new ChainManager(w.store, w.servers, stopping,
                new SingleInstanceLeadership(), new PlacementEngine(w.servers, w.net, stopping, new Random(1), t),
                new RulePlanner(Fixtures.APP, w.net), new Deployer(stopping, t), t, Fixtures.synthesis());

        w.net.down(Fixtures.S2);
        assertThrows(Stopped.class, () -> owner.reroute(Fixtures.D2)); // s3's rules are in, nothing recorded after
        assertEquals(4, w.switches.rules(S3).size());

        // the next owner (the world's manager over the same store) removes the chain: nothing of it stays
        w.manager.remove(id);
        assertEquals(w.switches.log().toString(), 0, w.switches.total());
    }
}
