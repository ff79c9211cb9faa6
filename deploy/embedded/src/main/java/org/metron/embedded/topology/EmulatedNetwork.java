package org.metron.embedded.topology;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real emulated topology, built and torn down by the project's launcher (topologies/topo), for tests and
 * benchmarks: they exercise the same OVS bridges, namespaces and veths as the demo.
 */
public final class EmulatedNetwork implements AutoCloseable {
    public static final Path REPO = findRepo();
    private final Path state;
    private final JsonNode json;

    private EmulatedNetwork(Path state) throws IOException {
        this.state = state;
        this.json = new ObjectMapper().readTree(state.toFile());
    }

    /** Whether the agent binary is built (the launcher then starts one per server). */
    public static boolean agentBuilt() {
        return Files.isExecutable(REPO.resolve("agent/build/metron-agent"));
    }

    /** Whether this process may build topologies (root, OVS installed). */
    public static boolean available() {
        return "root".equals(System.getProperty("user.name")) && Files.isExecutable(Paths.get("/usr/sbin/ovs-vswitchd"));
    }

    public static EmulatedNetwork up(String topology, int controllerPort, Path runRoot) throws IOException {
        return up(topology, controllerPort, runRoot, false);
    }

    /** Builds the topology with its switches pointing at {@code controllerPort}; agents only when asked. */
    public static EmulatedNetwork up(String topology, int controllerPort, Path runRoot, boolean agents)
            throws IOException {
        List<String> cmd = new ArrayList<>(List.of(REPO.resolve("topologies/topo").toString(), "up", topology,
                "--controller", "tcp:127.0.0.1:" + controllerPort, "--run-root", runRoot.toString()));
        if (!agents) {
            cmd.add("--no-agents");
        }
        String out = run(cmd);
        String state = out.lines().filter(l -> l.endsWith("state.json") && !l.contains(" ")).findFirst()
                .orElseThrow(() -> new IOException("topo up printed no state file: " + out));
        return new EmulatedNetwork(Paths.get(state));
    }

    public Path stateFile() {
        return state;
    }

    public JsonNode node(String name) {
        return json.get("nodes").get(name);
    }

    public String bridge(String switchName) {
        return node(switchName).get("bridge").asText();
    }

    /**
     * Sets the link of OpenFlow port {@code port} of a switch up or down, as pulling its cable would. The port's
     * veth lives in the topology's OVS namespace (topologies/metron_topo/relay.py says why).
     */
    public void setPortUp(String switchName, int port, boolean up) throws IOException {
        JsonNode sw = node(switchName);
        run(List.of("ip", "-n", sw.get("netns").asText(), "link", "set",
                    sw.get("ports").get(Integer.toString(port)).asText(), up ? "up" : "down"));
    }

    /** ovs-ofctl against one of this topology's bridges. */
    public String ofctl(String switchName, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ovs-ofctl", "-O", "OpenFlow13", args[0],
                "unix:" + json.get("ovs_dir").asText() + "/" + bridge(switchName) + ".mgmt"));
        cmd.addAll(Arrays.asList(args).subList(1, args.length));
        return run(cmd);
    }

    /** Runs a command inside a host's or server's namespace. */
    public String exec(String nodeName, String... argv) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", node(nodeName).get("netns").asText()));
        cmd.addAll(Arrays.asList(argv));
        return run(cmd);
    }

    public static String run(List<String> cmd) throws IOException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try {
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IOException("timed out: " + String.join(" ", cmd));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted: " + cmd, e);
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException("`" + String.join(" ", cmd) + "` failed (" + p.exitValue() + "): " + out);
        }
        return out;
    }

    @Override
    public void close() throws IOException {
        run(List.of(REPO.resolve("topologies/topo").toString(), "down", state.toString()));
    }

    private static Path findRepo() {
        Path p = Paths.get("").toAbsolutePath();
        while (p != null && !Files.exists(p.resolve("topologies/topo"))) {
            p = p.getParent();
        }
        if (p == null) {
            throw new IllegalStateException("cannot find the repository root (topologies/topo) above "
                    + Paths.get("").toAbsolutePath());
        }
        return p;
    }
}
