package org.metron.app.testing;

import org.junit.rules.ExternalResource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * What Karaf commands print: System.out and System.err go to one buffer while a test runs (commands print
 * through them), and come back after it.
 */
public final class Console extends ExternalResource {
    private final ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    private PrintStream oldOut;
    private PrintStream oldErr;

    @Override
    protected void before() {
        oldOut = System.out;
        oldErr = System.err;
        PrintStream both = new PrintStream(buffer, true, StandardCharsets.UTF_8);
        System.setOut(both);
        System.setErr(both);
    }

    @Override
    protected void after() {
        System.setOut(oldOut);
        System.setErr(oldErr);
    }

    /** Forgets what was printed so far. */
    public void reset() {
        buffer.reset();
    }

    /** Everything printed since the last reset, both streams. */
    public String text() {
        return buffer.toString(StandardCharsets.UTF_8);
    }
}
