package org.metron.drivers.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A real metron-agent process for the tests (binary from system property {@code metron.agent.bin}), on a DPDK
 * null vdev and optionally a veth pair whose first end it attaches with {@code --fanout} (the agent's kernel
 * dispatch, the one with a NIC rule table). Everything it creates (process, veth pair, DPDK runtime dir) is
 * removed by {@link #close()}.
 */
public final class AgentProcess implements AutoCloseable {

    public static final String BIN_PROPERTY = "metron.agent.bin";
    private static final Pattern SERVING = Pattern.compile("serving on port (\\d+)");
    private static final AtomicInteger SEQ = new AtomicInteger();
    private static final long START_TIMEOUT_MS = 60_000;
    /**
     * Deadline of calls the tests expect to succeed: generous, because the shared build machine can be loaded
     * far beyond its two cores (a fresh JVM's first gRPC call was measured at 26 s at load average 22).
     */
    public static final java.time.Duration CALL_DEADLINE = java.time.Duration.ofSeconds(30);

    private final Process process;
    private final int port;
    private final String prefix;
    private final Path log;
    private final Veth veth;

    private AgentProcess(Process process, int port, String prefix, Path log, Veth veth) {
        this.process = process;
        this.port = port;
        this.prefix = prefix;
        this.log = log;
        this.veth = veth;
    }

    /** The agent binary; fails the test, saying how to get it, when it is missing. */
    public static Path binary() {
        Path bin = Paths.get(System.getProperty(BIN_PROPERTY, "../agent/build/metron-agent")).toAbsolutePath();
        if (!Files.isExecutable(bin)) {
            throw new AssertionError("metron-agent binary not found at " + bin + ": build it first (`make agent-build`"
                                             + ", which `make test` does) or point -D" + BIN_PROPERTY + " at it");
        }
        return bin;
    }

    /**
     * A TCP port no socket holds, below the kernel's ephemeral range, not answered before by this JVM: the rule of
     * topologies/metron_topo/ports.py, which the Python harnesses use. Never {@code new ServerSocket(0)}: that
     * answers an ephemeral port, free only until the listener binds it, and any outgoing connection in between (a
     * gRPC channel, a readiness probe) draws its local port from that same range (CI lost a Karaf that way).
     */
    public static synchronized int freePort() throws IOException {
        int high = Math.max(PORT_FLOOR + 1000, ephemeralLow());
        for (int tries = 0; tries < 1000; tries++) {
            int port = PORT_FLOOR + RANDOM.nextInt(high - PORT_FLOOR);
            if (!HANDED.contains(port) && bindable(port)) {
                HANDED.add(port);
                return port;
            }
        }
        throw new IOException("no free TCP port in " + PORT_FLOOR + "-" + (high - 1));
    }

    private static final int PORT_FLOOR = 20000;
    private static final java.util.Set<Integer> HANDED = new java.util.HashSet<>();
    private static final java.util.Random RANDOM = new java.util.Random();

    private static int ephemeralLow() {
        try {
            return Integer.parseInt(Files.readString(Paths.get("/proc/sys/net/ipv4/ip_local_port_range"))
                                            .trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32768;
        }
    }

    // On the wildcard address without SO_REUSEADDR: refused while any socket of this namespace holds the port,
    // on any address, even in TIME_WAIT.
    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new java.net.InetSocketAddress(port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Options of one agent run. */
    public static final class Options {
        int listenPort;
        boolean fanout;
        Path tlsCert;
        Path tlsKey;
        Path tlsCa;

        public Options listenPort(int p) {
            listenPort = p;
            return this;
        }

        /** Attach a fresh veth pair's first end with --fanout. */
        public Options fanout() {
            fanout = true;
            return this;
        }

        public Options tls(Path cert, Path key, Path ca) {
            tlsCert = cert;
            tlsKey = key;
            tlsCa = ca;
            return this;
        }
    }

    public static AgentProcess start(Options o) throws IOException, InterruptedException {
        Path bin = binary();
        int n = SEQ.incrementAndGet();
        String prefix = "metron-drivers-test-" + ProcessHandle.current().pid() + "-" + n;
        Veth veth = o.fanout ? Veth.create("md" + (ProcessHandle.current().pid() % 100000) + "x" + n) : null;
        List<String> cmd = new ArrayList<>(List.of(bin.toString(), "--listen", "127.0.0.1:" + o.listenPort));
        if (veth != null) {
            cmd.addAll(List.of("--fanout", veth.agentSide()));
        }
        if (o.tlsCert != null) {
            cmd.addAll(List.of("--tls-cert", o.tlsCert.toString(), "--tls-key", o.tlsKey.toString(),
                               "--tls-ca", o.tlsCa.toString()));
        }
        // lcore 0 is the main lcore, whose affinity the gRPC threads inherit; the busy-polling worker gets lcore 1
        cmd.addAll(List.of("--dpdk", "-l", "0-1", "--vdev", "net_null0", "--no-huge", "-m", "256", "--no-pci",
                           "--file-prefix", prefix, "--"));
        Path log = Files.createTempFile(prefix, ".log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.currentTimeMillis() + START_TIMEOUT_MS;
        while (System.currentTimeMillis() < deadline) {
            Matcher m = SERVING.matcher(Files.readString(log, StandardCharsets.UTF_8));
            if (m.find()) {
                return new AgentProcess(p, Integer.parseInt(m.group(1)), prefix, log, veth);
            }
            if (!p.isAlive()) {
                break;
            }
            Thread.sleep(50);
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        if (veth != null) {
            veth.close();
        }
        removeRuntimeDir(prefix);
        Files.deleteIfExists(log);
        throw new AssertionError("metron-agent did not start (" + String.join(" ", cmd) + "):\n" + out);
    }

    public int port() {
        return port;
    }

    /** The veth end attached to the agent, or null. */
    public String fanoutNic() {
        return veth == null ? null : veth.agentSide();
    }

    /** The veth end the test sends into (frames arrive on {@link #fanoutNic()}). */
    public String peerNic() {
        return veth == null ? null : veth.peerSide();
    }

    public String output() throws IOException {
        return Files.readString(log, StandardCharsets.UTF_8);
    }

    /** Stops the agent (SIGTERM, then SIGKILL after 10 s) and removes what it used. */
    @Override
    public void close() throws IOException, InterruptedException {
        stopProcess();
        if (veth != null) {
            veth.close();
        }
        Files.deleteIfExists(log);
    }

    /** Kills the agent at once (SIGKILL, as a crash): no goodbye on its connections. */
    public void kill() throws IOException, InterruptedException {
        if (process.isAlive()) {
            process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        }
        removeRuntimeDir(prefix);
    }

    /** Stops the process only; the veth pair stays (for a restart on the same NIC). */
    public void stopProcess() throws IOException, InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
        removeRuntimeDir(prefix);
    }

    private static void removeRuntimeDir(String prefix) throws IOException {
        Path dir = Paths.get("/var/run/dpdk", prefix);
        if (Files.isDirectory(dir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                    Files.deleteIfExists(p);
                }
            }
        }
    }
}
