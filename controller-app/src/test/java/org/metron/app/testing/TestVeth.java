package org.metron.app.testing;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A veth pair {@code <name>a}/{@code <name>b} in the root namespace, both ends up: the kernel interface a real
 * agent steers by tag with {@code --fanout <name>a} (AF_PACKET fanout, the dispatch with a NIC rule table).
 */
public final class TestVeth implements AutoCloseable {
    private final String name;

    private TestVeth(String name) {
        this.name = name;
    }

    /** A pair named after this JVM and {@code prefix}, so concurrent test runs do not collide. */
    public static TestVeth create(String prefix) throws Exception {
        String name = prefix + (ProcessHandle.current().pid() % 100000);
        ip("link", "add", name + "a", "type", "veth", "peer", "name", name + "b");
        TestVeth v = new TestVeth(name);
        ip("link", "set", name + "a", "up");
        ip("link", "set", name + "b", "up");
        return v;
    }

    /** The end the agent attaches. */
    public String agentSide() {
        return name + "a";
    }

    @Override
    public void close() throws Exception {
        ip("link", "del", agentSide()); // deleting one end removes the pair
    }

    private static void ip(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of("ip"));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new AssertionError(String.join(" ", cmd) + ": " + out);
        }
    }
}
