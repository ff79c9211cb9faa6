package org.metron.app.testing;

import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.agent.GrpcAgentClient;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real metron-agent process (binary from -Dmetron.agent.bin, default ../agent/build/metron-agent) on a DPDK
 * null vdev with two lcores, serving gRPC on a free loopback port, and a connected GrpcAgentClient. close()
 * stops the process and removes its DPDK runtime directory.
 */
public final class RealAgent implements AutoCloseable {
    private static final Pattern SERVING = Pattern.compile("serving on port (\\d+)");

    private final Process process;
    private final String prefix;
    private final Path log;
    private final GrpcAgentClient client;

    private RealAgent(Process process, String prefix, Path log, GrpcAgentClient client) {
        this.process = process;
        this.prefix = prefix;
        this.log = log;
        this.client = client;
    }

    public static RealAgent start(String name) throws IOException, InterruptedException {
        return start(name, List.of(), List.of("-l", "0-1"));
    }

    /**
     * An agent with two worker lcores serving on a given loopback port (0: a free one; else a restart of an
     * agent that served there), with further agent options (e.g. {@code --fanout IFACE}: a steered interface
     * gets one rx queue per worker, and NIC rules name the worker core as queue, so core 1 needs two).
     */
    public static RealAgent startOnPort(String name, int port, String... options)
            throws IOException, InterruptedException {
        int cpus = Runtime.getRuntime().availableProcessors();
        List<String> all = new java.util.ArrayList<>(List.of("--listen", "127.0.0.1:" + port, "--cores", "1,2"));
        all.addAll(List.of(options));
        return start(name, all, List.of("--lcores", "(0-2)@(0-" + (cpus - 1) + ")"));
    }

    /**
     * An agent with {@code workers} worker lcores spread over the machine's CPUs (more lcores than CPUs, as
     * the emulated topologies run agents), for tests that need several cores.
     */
    public static RealAgent startWorkers(String name, int workers) throws IOException, InterruptedException {
        int cpus = Runtime.getRuntime().availableProcessors();
        List<String> cores = new java.util.ArrayList<>();
        for (int c = 1; c <= workers; c++) {
            cores.add(Integer.toString(c));
        }
        return start(name, List.of("--cores", String.join(",", cores)),
                List.of("--lcores", "(0-" + workers + ")@(0-" + (cpus - 1) + ")"));
    }

    private static RealAgent start(String name, List<String> options, List<String> lcores)
            throws IOException, InterruptedException {
        Path bin = Paths.get(System.getProperty("metron.agent.bin", "../agent/build/metron-agent")).toAbsolutePath();
        if (!Files.isExecutable(bin)) {
            throw new AssertionError("metron-agent not found at " + bin + ": `make agent-build` first");
        }
        String prefix = "metron-ctl-test-" + ProcessHandle.current().pid() + "-" + name;
        Path log = Files.createTempFile(prefix, ".log");
        List<String> cmd = new java.util.ArrayList<>(List.of(bin.toString()));
        cmd.addAll(options.contains("--listen") ? options : listenAnywhere(options));
        cmd.add("--dpdk");
        cmd.addAll(lcores);
        cmd.addAll(List.of("--vdev", "net_null0", "--no-huge", "-m", "256", "--no-pci", "--file-prefix", prefix,
                "--"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.currentTimeMillis() + 30_000;
        while (System.currentTimeMillis() < deadline && p.isAlive()) {
            Matcher m = SERVING.matcher(Files.readString(log, StandardCharsets.UTF_8));
            if (m.find()) {
                AgentEndpoint ep = AgentEndpoint.builder().host("127.0.0.1").port(Integer.parseInt(m.group(1)))
                        .deadline(Duration.ofSeconds(5)).build();
                return new RealAgent(p, prefix, log, GrpcAgentClient.connect(ep));
            }
            Thread.sleep(50);
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        removeRuntimeDir(prefix);
        throw new AssertionError("metron-agent did not start (" + String.join(" ", cmd) + "):\n" + out);
    }

    private static List<String> listenAnywhere(List<String> options) {
        List<String> out = new java.util.ArrayList<>(List.of("--listen", "127.0.0.1:0"));
        out.addAll(options);
        return out;
    }

    public GrpcAgentClient client() {
        return client;
    }

    /** What the agent printed so far (for assertion messages). */
    public String log() throws IOException {
        return Files.readString(log, StandardCharsets.UTF_8);
    }

    /** Whether the agent's process runs (not killed, not exited). */
    public boolean alive() {
        return process.isAlive();
    }

    /**
     * Stops the process (SIGSTOP) as an agent starved of CPU looks to its controller: its connection stays up (the
     * kernel keeps the socket) and nothing answers until {@link #thaw}.
     */
    public void freeze() throws IOException, InterruptedException {
        signal("STOP");
    }

    /** Lets a {@link #freeze frozen} process run again (SIGCONT). */
    public void thaw() throws IOException, InterruptedException {
        signal("CONT");
    }

    private void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new AssertionError("kill -" + name + " " + process.pid() + " failed");
        }
    }

    /** Kills the process as a crash does (SIGKILL: no state saved at exit); {@link #close()} still cleans up. */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws Exception {
        client.close();
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        removeRuntimeDir(prefix);
        Files.deleteIfExists(log);
    }

    private static void removeRuntimeDir(String prefix) throws IOException {
        Path dir = Paths.get("/var/run/dpdk", prefix);
        if (Files.exists(dir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path f : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }
}
