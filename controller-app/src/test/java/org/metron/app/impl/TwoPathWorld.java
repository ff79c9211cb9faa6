package org.metron.app.impl;

import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.time.Duration;
import java.util.Map;
import java.util.Random;

/**
 * Ingress on a non-programmable s1, two programmable paths s1-s2-s4 and s1-s3-s4, one server on s4:10: a chain
 * offloaded on s2 has s3 to go to when s2 fails. {@link #json} enters at s1:1 and leaves at s4:20.
 */
final class TwoPathWorld {
    static final String S3 = "of:0000000000000003";
    static final String S4 = "of:0000000000000004";

    final TestNetwork net = new TestNetwork().device(Fixtures.S1, DeviceRole.OTHER, 0)
            .device(Fixtures.S2, DeviceRole.OPENFLOW_SWITCH, 1000).device(S3, DeviceRole.OPENFLOW_SWITCH, 1000)
            .device(S4, DeviceRole.OPENFLOW_SWITCH, 1000)
            .cable(Fixtures.S1, 2, Fixtures.S2, 1).cable(Fixtures.S1, 3, S3, 1)
            .cable(Fixtures.S2, 2, S4, 1).cable(S3, 2, S4, 2);
    final TestAgent agent = new TestAgent("a:1", 4, 0.1).nic("eth0", true, 64);
    final TestServers servers = new TestServers().add(new MetronServer(DeviceId.deviceId("metron:a"), agent,
            Map.of("eth0", ConnectPoint.deviceConnectPoint(S4 + "/10"))));
    final TestSwitches switches = new TestSwitches();
    final ChainStore store = new ChainStore(new LocalStoreFactory(), switches);
    /** The world's one leadership, which a scaling executor over it shares (its term fences). */
    final SingleInstanceLeadership leadership = new SingleInstanceLeadership();
    final ChainManager manager;

    TwoPathWorld() {
        this(Fixtures.synthesis());
    }

    TwoPathWorld(Synthesis synthesis) {
        Duration t = Duration.ofSeconds(2);
        manager = new ChainManager(store, servers, switches, leadership,
                new PlacementEngine(servers, net, switches, new Random(1), t), new RulePlanner(Fixtures.APP, net),
                new Deployer(switches, t), t, synthesis);
    }

    /** The table entries ({@link Deployer#entry}) the switches hold now. */
    java.util.Set<Object> entriesHeld() {
        return java.util.stream.Stream.of(Fixtures.S1, Fixtures.S2, S3, S4)
                .flatMap(d -> switches.rules(DeviceId.deviceId(d)).stream()).map(Deployer::entry)
                .collect(java.util.stream.Collectors.toSet());
    }

    static String json(String name) {
        return Fixtures.chainJson(name).replace(Fixtures.S1 + "/3", S4 + "/20");
    }
}
