package org.metron.app.bench;

import org.metron.app.api.ChainId;
import org.metron.app.api.RuleInfo;
import org.metron.app.impl.ChainManager;
import org.metron.app.impl.Deployer;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.RulePlanner;
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
import org.metron.synth.Synthesizer;
import org.metron.synth.TargetProfile;
import org.metron.synth.corpus.CorpusGenerator;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Random;

/**
 * Paper §7 "deployment of 4000 traffic classes": the controller's whole submit path (parse, synthesis,
 * placement, rule planning, install on in-memory switches and agent) for FW(n)->NAPT->LB, against the
 * synthesizer alone on the same chain in the same run. The ratio is the controller's overhead factor.
 * Writes bench/results/deploy_fw*_napt_lb.json.
 */
public final class DeployBench {
    /** make test's bench smoke (-Dmetron.bench.smoke=true): one round, to prove the bench still runs. */
    private static final boolean SMOKE = Boolean.getBoolean("metron.bench.smoke");
    private static final int RUNS = SMOKE ? 1 : 5;

    private DeployBench() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Paths.get(args.length > 0 ? args[0] : "bench/results");
        Files.createDirectories(out);
        for (int rules : SMOKE ? new int[]{1000} : new int[]{1000, 4000}) {
            ChainSpec base = CorpusGenerator.fwNaptLb(rules, 11);
            ChainSpec spec = new ChainSpec(base.name(), base.nfs(), base.links(), base.ingress(), base.egress(),
                    new Deployment(TagType.MAC, 1, 1, false, Fixtures.S1 + "/1", Fixtures.S1 + "/3", 1));
            String json = spec.toJson();
            double[] submit = new double[RUNS];
            double[] synth = new double[RUNS];
            int offloaded = 0;
            for (int run = -1; run < RUNS; run++) { // run -1 warms the JIT up
                long t0 = System.nanoTime();
                Synthesizer.compile(spec, TargetProfile.OPENFLOW13.withCapacity(65_000));
                long t1 = System.nanoTime();
                ChainManager m = manager();
                long t2 = System.nanoTime();
                m.submit(json);
                long t3 = System.nanoTime();
                offloaded = (int) m.rules(null).stream().filter(r -> r.role() == RuleInfo.Role.OFFLOAD).count();
                m.remove(ChainId.of(spec.name()));
                if (run >= 0) {
                    synth[run] = (t1 - t0) / 1e6;
                    submit[run] = (t3 - t2) / 1e6;
                }
            }
            double s = median(submit);
            double b = median(synth);
            String name = "deploy_fw" + rules + "_napt_lb";
            PlacementBench.write(out, name, s, "ms", "synthesis-only", b, PlacementBench.machine());
            System.out.printf(Locale.ROOT, "%s: submit %.1f ms (synthesis alone %.1f ms), %d offload rules%n",
                    name, s, b, offloaded);
        }
    }

    private static ChainManager manager() {
        TestNetwork net = new TestNetwork().device(Fixtures.S1, DeviceRole.OPENFLOW_SWITCH, 65_000)
                .device(Fixtures.S2, DeviceRole.OPENFLOW_SWITCH, 65_000).cable(Fixtures.S1, 2, Fixtures.S2, 1);
        TestServers servers = new TestServers().add(Fixtures.server(0, new TestAgent("a:1", 4, 0)
                .nic("eth0", true, 64).nic("eth1", true, 64)));
        TestSwitches switches = new TestSwitches();
        Duration t = Duration.ofSeconds(30);
        return new ChainManager(new ChainStore(new LocalStoreFactory(), switches), servers, switches,
                new SingleInstanceLeadership(), new PlacementEngine(servers, net, switches, new Random(1), t),
                new RulePlanner(Fixtures.APP, net), new Deployer(switches, t), t, Synthesis.SYNTHESIZER);
    }

    private static double median(double[] v) {
        double[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
