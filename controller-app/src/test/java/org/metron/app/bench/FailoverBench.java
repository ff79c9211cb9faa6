package org.metron.app.bench;

import org.metron.app.api.ChainId;
import org.metron.app.impl.ChainManager;
import org.metron.app.local.LocalStoreFactory;
import org.metron.app.spi.DeviceRole;
import org.metron.app.spi.MetronServer;
import org.metron.app.store.ChainStore;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.synth.ChainSpec;
import org.metron.synth.Deployment;
import org.metron.synth.TagType;
import org.metron.synth.corpus.CorpusGenerator;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Failover of FW(1000)->NAPT->LB when its offload switch fails (s1 ingress, offload on s2, the other path through
 * s3 to the server's switch s4): the time from the failure reported to the new rules installed, with the backup
 * precomputed after deployment (a lookup) against recomputing path, offload device and rules (the backups dropped),
 * in the same run with the real synthesizer. Writes bench/results/failover_fw1000_napt_lb.json.
 */
public final class FailoverBench {
    /** make test's bench smoke (-Dmetron.bench.smoke=true): one round, to prove the bench still runs. */
    private static final boolean SMOKE = Boolean.getBoolean("metron.bench.smoke");
    private static final int RUNS = SMOKE ? 1 : 5;
    private static final int RULES = 1000;
    private static final String S3 = "of:0000000000000003";
    private static final String S4 = "of:0000000000000004";

    private FailoverBench() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Paths.get(args.length > 0 ? args[0] : "bench/results");
        Files.createDirectories(out);
        ChainSpec base = CorpusGenerator.fwNaptLb(RULES, 11);
        ChainSpec spec = new ChainSpec(base.name(), base.nfs(), base.links(), base.ingress(), base.egress(),
                new Deployment(TagType.MAC, 1, 1, false, Fixtures.S1 + "/1", S4 + "/20", 1));
        String json = spec.toJson();
        ChainId id = ChainId.of(spec.name());
        double[] lookup = new double[RUNS];
        double[] recompute = new double[RUNS];
        for (int run = -1; run < RUNS; run++) { // run -1 warms the JIT up
            for (boolean backups : new boolean[]{true, false}) {
                TestNetwork net = network();
                TestServers servers = new TestServers().add(new MetronServer(DeviceId.deviceId("metron:a"),
                        new TestAgent("a:1", 4, 0).nic("eth0", true, 64),
                        Map.of("eth0", ConnectPoint.deviceConnectPoint(S4 + "/10"))));
                org.metron.app.testing.TestSwitches switches = new org.metron.app.testing.TestSwitches();
                ChainStore store = new ChainStore(new LocalStoreFactory(), switches);
                ChainManager m = RecoveryBench.manager(store, servers, switches, net);
                m.submit(json);
                m.awaitBackups();
                if (!backups) {
                    store.backups().put(id, store.backups().get(id).get().value().withFailovers(Map.of()));
                }
                net.down(Fixtures.S2);
                long t0 = System.nanoTime();
                List<ChainId> moved = m.reroute(Fixtures.D2);
                long t1 = System.nanoTime();
                String reason = m.chain(id).get().reason();
                if (!moved.equals(List.of(id)) || reason.contains("from the backup") != backups) {
                    throw new AssertionError("reroute moved " + moved + ": " + reason);
                }
                if (run >= 0) {
                    (backups ? lookup : recompute)[run] = (t1 - t0) / 1e6;
                }
                m.close();
            }
        }
        double l = RecoveryBench.median(lookup);
        double r = RecoveryBench.median(recompute);
        String name = "failover_fw" + RULES + "_napt_lb";
        PlacementBench.write(out, name, l, "ms", "recompute", r, PlacementBench.machine());
        System.out.printf(Locale.ROOT, "%s: from the precomputed backup %.1f ms (recomputing %.1f ms)%n", name, l, r);
    }

    private static TestNetwork network() {
        return new TestNetwork().device(Fixtures.S1, DeviceRole.OTHER, 0)
                .device(Fixtures.S2, DeviceRole.OPENFLOW_SWITCH, 65_000).device(S3, DeviceRole.OPENFLOW_SWITCH, 65_000)
                .device(S4, DeviceRole.OPENFLOW_SWITCH, 65_000)
                .cable(Fixtures.S1, 2, Fixtures.S2, 1).cable(Fixtures.S1, 3, S3, 1)
                .cable(Fixtures.S2, 2, S4, 1).cable(S3, 2, S4, 2);
    }
}
