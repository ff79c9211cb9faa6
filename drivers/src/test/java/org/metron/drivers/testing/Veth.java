package org.metron.drivers.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A veth pair {@code <name>a}/{@code <name>b} in the root namespace, up, without IPv6 chatter. */
public final class Veth implements AutoCloseable {

    private final String a;
    private final String b;

    private Veth(String a, String b) {
        this.a = a;
        this.b = b;
    }

    public static Veth create(String name) throws IOException, InterruptedException {
        Veth v = new Veth(name + "a", name + "b");
        run("ip", "link", "add", v.a, "type", "veth", "peer", "name", v.b);
        try {
            for (String end : List.of(v.a, v.b)) {
                run("sysctl", "-q", "-w", "net.ipv6.conf." + end + ".disable_ipv6=1");
                run("ip", "link", "set", end, "up");
            }
        } catch (IOException | RuntimeException e) {
            v.close();
            throw e;
        }
        return v;
    }

    public String agentSide() {
        return a;
    }

    public String peerSide() {
        return b;
    }

    /** Sends {@code count} UDP frames to {@code dstMac} into the peer end (scapy, as the e2e tests do). */
    public void send(String dstMac, int count) throws IOException, InterruptedException {
        sendInto(b, dstMac, count);
    }

    /** Sends {@code count} UDP frames to {@code dstMac} out of interface {@code iface}. */
    public static void sendInto(String iface, String dstMac, int count) throws IOException, InterruptedException {
        run("/usr/bin/python3", "-c",
            "from scapy.all import Ether, IP, UDP, Raw, sendp\n"
                    + "sendp(Ether(dst='" + dstMac + "', src='02:00:00:00:00:aa')/IP(src='10.0.0.1', dst='10.0.0.2')"
                    + "/UDP(sport=1234, dport=53)/Raw(b'x' * 18), iface='" + iface + "', count=" + count
                    + ", verbose=False)");
    }

    @Override
    public void close() throws IOException, InterruptedException {
        // deleting one end removes the pair
        new ProcessBuilder("ip", "link", "del", a).redirectErrorStream(true).start().waitFor(10, TimeUnit.SECONDS);
    }

    static void run(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
    }
}
