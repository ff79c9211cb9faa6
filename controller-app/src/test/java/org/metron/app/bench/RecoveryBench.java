package org.metron.app.bench;

import org.metron.app.api.ChainId;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
import org.metron.app.impl.ServerRecovery;
import org.metron.app.impl.Synthesis;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.local.SingleInstanceLeadership;
import org.metron.app.spi.DeviceRole;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.metron.synth.ChainSpec;
import org.metron.synth.Deployment;
import org.metron.synth.TagType;
import org.metron.synth.corpus.CorpusGenerator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Restart recovery of FW(1000)->NAPT->LB on a server whose agent (in memory) lost everything: the time
 * {@link ServerRecovery} takes to give it back its NIC rules and pipeline, against submitting the same chain
 * from scratch in the same run (what an operator would otherwise do). Writes bench/results/recovery_fw1000_napt_lb.json.
 */
public final class RecoveryBench {
    /** make test's bench smoke (-Dmetron.bench.smoke=true): one round, to prove the bench still runs. */
    private static final boolean SMOKE = Boolean.getBoolean("metron.bench.smoke");
    private static final int RUNS = SMOKE ? 1 : 5;
    private static final int RULES = 1000;

    private RecoveryBench() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Paths.get(args.length > 0 ? args[0] : "bench/results");
        Files.createDirectories(out);
        ChainSpec base = CorpusGenerator.fwNaptLb(RULES, 11);
        ChainSpec spec = new ChainSpec(base.name(), base.nfs(), base.links(), base.ingress(), base.egress(),
                new Deployment(TagType.MAC, 1, 1, false, Fixtures.S1 + "/1", Fixtures.S1 + "/3", 1));
        String json = spec.toJson();
        double[] restore = new double[RUNS];
        double[] submit = new double[RUNS];
        for (int run = -1; run < RUNS; run++) { // run -1 warms the JIT up
            TestAgent agent = new TestAgent("a:1", 4, 0).nic("eth0", true, 64).nic("eth1", true, 64);
            TestServers servers = new TestServers().add(Fixtures.server(0, agent));
            TestSwitches switches = new TestSwitches();
            ChainStore store = new ChainStore(new LocalStoreFactory(), switches);
            ChainManager m = manager(store, servers, switches);
            ServerRecovery recovery = new ServerRecovery(store, m, Duration.ofSeconds(30));
            long t0 = System.nanoTime();
            m.submit(json);
            long t1 = System.nanoTime();
            agent.restart();
            long t2 = System.nanoTime();
            List<ChainId> restored = recovery.restore(servers.servers().iterator().next());
            long t3 = System.nanoTime();
            if (!restored.equals(List.of(ChainId.of(spec.name()))) || !agent.pipelines().containsKey(spec.name())) {
                throw new AssertionError("recovery restored " + restored + ", agent runs " + agent.pipelines()
                        .keySet());
            }
            if (run >= 0) {
                submit[run] = (t1 - t0) / 1e6;
                restore[run] = (t3 - t2) / 1e6;
            }
        }
        double r = median(restore);
        double s = median(submit);
        String name = "recovery_fw" + RULES + "_napt_lb";
        PlacementBench.write(out, name, r, "ms", "resubmit", s, PlacementBench.machine());
        System.out.printf(Locale.ROOT, "%s: restore %.1f ms (submitting it again %.1f ms)%n", name, r, s);
    }

    private static ChainManager manager(ChainStore store, TestServers servers, TestSwitches switches) {
        return manager(store, servers, switches, new TestNetwork().device(Fixtures.S1, DeviceRole.OPENFLOW_SWITCH, 65_000)
                .device(Fixtures.S2, DeviceRole.OPENFLOW_SWITCH, 65_000).cable(Fixtures.S1, 2, Fixtures.S2, 1));
    }

    /** A chain manager over in-memory switches on {@code net}, with the real synthesizer (the benches' world). */
    static ChainManager manager(ChainStore store, TestServers servers, TestSwitches switches, TestNetwork net) {
        Duration t = Duration.ofSeconds(30);
        return new ChainManager(store, servers, switches, new SingleInstanceLeadership(),
                new PlacementEngine(servers, net, switches, new Random(1), t), new RulePlanner(Fixtures.APP, net),
                new Deployer(switches, t), t, Synthesis.SYNTHESIZER);
    }

    static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
