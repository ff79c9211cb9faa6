package org.metron.app.bench;

import org.metron.app.api.Deployments;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.GroupSpec;
import org.metron.app.api.ChainId;
import org.metron.synth.Deployment;
import org.metron.synth.TagType;
import org.metron.app.impl.PlacementEngine;
import org.metron.app.impl.ServerChoice;
import org.metron.app.testing.Fixtures;
import org.metron.app.testing.TestAgent;
import org.metron.app.testing.TestNetwork;
import org.metron.app.testing.TestServers;
import org.metron.app.testing.TestSwitches;
import org.onosproject.net.ConnectPoint;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

/**
 * Paper figure 8 on this machine: place C one-core chains on S servers with the real PlacementEngine (power of
 * two choices over agents reporting load = busy cores / cores) and, side by side, with a uniform random choice
 * among servers with a free core. Reports the most loaded server's load above the ideal (lower is better) and
 * the servers queried per decision against asking every server. Writes bench/results/placement_*.json.
 */
public final class PlacementBench {
    private static final int CORES = 16;
    /** make test's bench smoke (-Dmetron.bench.smoke=true): the smallest configuration, to prove the bench still runs. */
    private static final boolean SMOKE = Boolean.getBoolean("metron.bench.smoke");

    private PlacementBench() {
    }

    public static void main(String[] args) throws IOException {
        Path out = Paths.get(args.length > 0 ? args[0] : "bench/results");
        Files.createDirectories(out);
        String machine = machine();
        int[][] configs = SMOKE ? new int[][]{{16, 200}} : new int[][]{{16, 200}, {128, 1000}, {1024, 10000}};
        for (int[] c : configs) {
            int servers = c[0];
            int chains = c[1];
            double[] p2c = run(servers, chains, true, 7);
            double[] uni = run(servers, chains, false, 7);
            String tag = servers + "s_" + chains + "c";
            write(out, "placement_excess_load_" + tag, p2c[0], "fraction", "uniform-random", uni[0], machine);
            write(out, "placement_queries_per_decision_" + tag, p2c[1], "servers", "query-all", servers, machine);
            System.out.printf(Locale.ROOT, "%d servers %d chains: excess load p2c %.4f vs uniform %.4f; "
                    + "%.2f queries per decision vs %d%n", servers, chains, p2c[0], uni[0], p2c[1], servers);
        }
    }

    /** @return {max server load - ideal load, servers queried per decision} */
    private static double[] run(int servers, int chains, boolean twoChoices, long seed) {
        TestNetwork net = Fixtures.network(0);
        TestServers reg = new TestServers();
        List<TestAgent> agents = new ArrayList<>();
        int[] used = new int[servers];
        for (int i = 0; i < servers; i++) {
            TestAgent a = new TestAgent("s" + i + ":1", CORES, 0).nic("eth0", true, 64);
            agents.add(a);
            reg.add(new org.metron.app.spi.MetronServer(org.onosproject.net.DeviceId.deviceId("metron:s" + i), a,
                    java.util.Map.of("eth0", ConnectPoint.deviceConnectPoint(Fixtures.S2 + "/" + (10 + i)))));
        }
        net.cable(Fixtures.S2, 1, Fixtures.S1, 2);
        PlacementEngine engine = new PlacementEngine(reg, net, new TestSwitches(), new Random(seed),
                Duration.ofSeconds(1));
        Deployment spec = Deployments.of(TagType.MAC, 1, 1, false,
                ConnectPoint.deviceConnectPoint(Fixtures.S1 + "/1"), ConnectPoint.deviceConnectPoint(Fixtures.S1
                + "/3"), 1);
        Random uniform = new Random(seed);
        long queries = 0;
        for (int k = 0; k < chains; k++) {
            int s;
            if (twoChoices) {
                ServerChoice c = engine.chooseServer(ChainId.of("c" + k), spec, 1, d -> Set.of());
                queries += c.queried();
                s = Integer.parseInt(c.server().id().toString().substring("metron:s".length()));
            } else {
                do {
                    s = uniform.nextInt(servers);
                } while (used[s] >= CORES);
            }
            agents.get(s).deployPipeline(DeployPipelineRequest.newBuilder().setPipelineId("c" + k)
                    .addGroups(GroupSpec.newBuilder().setCore(used[s])).build());
            used[s]++;
            agents.get(s).load((double) used[s] / CORES);
        }
        int max = 0;
        for (int u : used) {
            max = Math.max(max, u);
        }
        double ideal = (double) chains / servers / CORES;
        return new double[]{(double) max / CORES - ideal, (double) queries / chains};
    }

    static void write(Path dir, String name, double value, String unit, String baseline,
                              double baselineValue, String machine) throws IOException {
        String json = String.format(Locale.ROOT, "{\"name\": \"%s\", \"value\": %.6f, \"unit\": \"%s\", "
                        + "\"baseline\": \"%s\", \"baseline_value\": %.6f, \"ratio\": %.6f, \"machine\": \"%s\"}%n",
                name, value, unit, baseline, baselineValue, baselineValue == 0 ? 0 : value / baselineValue, machine);
        Files.write(dir.resolve(name + ".json"), json.getBytes(StandardCharsets.UTF_8));
    }

    static String machine() {
        String cpu = "unknown cpu";
        try {
            cpu = Files.readAllLines(Paths.get("/proc/cpuinfo")).stream().filter(l -> l.startsWith("model name"))
                    .findFirst().map(l -> l.substring(l.indexOf(':') + 1).trim()).orElse(cpu);
        } catch (IOException e) {
            // keep "unknown cpu"
        }
        return cpu.replace("\"", "") + ", " + Runtime.getRuntime().availableProcessors() + " cores";
    }
}
