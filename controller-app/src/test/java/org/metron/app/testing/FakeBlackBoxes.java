package org.metron.app.testing;

import org.metron.agent.v1.BlackBoxStats;
import org.metron.agent.v1.GroupSpec;
import org.metron.app.testing.AgentRefusals.Refused;
import org.metron.drivers.agent.AgentException.Code;
import org.metron.synth.click.Arg;
import org.metron.synth.click.ClickParser;
import org.metron.synth.click.ElementDecl;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@link TestAgent}'s black-box NFs (docs/blackbox.md), as agent/src/elements/blackbox_nf.cc starts them when a
 * pipeline is deployed: a program that does not exist is "not found", one that is no regular executable file
 * "not executable", a RING box on an agent without hugepages is refused for that, and otherwise the program is
 * started with the agent's argument shape ({@code PROGRAM --proc-type=secondary --file-prefix ... -- ARGS}) and
 * given ATTACH_TIMEOUT ms: one that exits meanwhile "exited at start (exit N)" or "(signal N)", one still running
 * "did not attach within N ms" (and is killed), all FAILED_PRECONDITION with {@code black-box NF 'NAME'
 * (PROGRAM): } first. The fake has no rings to attach to: a program built on the NF library (it holds the
 * library's {@link #READY_FD} variable name, agent/nflib) counts as attached without being started. Its stats:
 * RUNNING, pid 0, counters 0, unless a test sets them ({@link TestAgent#blackBox}).
 */
final class FakeBlackBoxes {
    /** The environment variable metron_nf_init() reads: a program holding it is built on the NF library. */
    static final String READY_FD = "METRON_NF_READY_FD";
    static final String CLASS = "BlackBoxNF";

    private FakeBlackBoxes() {
    }

    /** One BlackBoxNF element's arguments, with the agent's defaults. */
    static final class Box {
        final String element;
        final String nf;
        final String program;
        final List<String> args;
        final String mode;
        final String onFailure;
        final int attachMs;

        Box(ElementDecl d) {
            Map<String, String> kw = new HashMap<>();
            for (Arg a : d.args()) {
                String[] kv = a.normalized().split(" ", 2);
                kw.put(kv[0], kv.length > 1 ? unquote(kv[1].trim()) : "");
            }
            element = d.name();
            nf = kw.getOrDefault("NAME", d.name());
            program = kw.getOrDefault("PROGRAM", "");
            String a = kw.getOrDefault("ARGS", "").trim();
            args = a.isEmpty() ? List.of() : List.of(a.split("\\s+"));
            mode = kw.getOrDefault("MODE", "RING");
            onFailure = kw.getOrDefault("ON_FAILURE", "CLOSED");
            attachMs = Integer.parseInt(kw.getOrDefault("ATTACH_TIMEOUT", "2000"));
        }

        private static String unquote(String s) {
            return s.length() >= 2 && s.startsWith("\"") && s.endsWith("\"") ? s.substring(1, s.length() - 1) : s;
        }
    }

    /** The BlackBoxNF elements of a group config, in order. */
    static List<Box> of(String click) {
        List<Box> out = new ArrayList<>();
        for (ElementDecl e : ClickParser.parse(click).elements().values()) {
            if (e.className().equals(CLASS)) {
                out.add(new Box(e));
            }
        }
        return out;
    }

    /** Starts (checks) every black box of the groups; the first that fails refuses the whole request. */
    static void start(List<GroupSpec> groups, boolean hugepages) {
        for (GroupSpec g : groups) {
            for (Box b : of(g.getClickConfig())) {
                String why = why(b, hugepages);
                if (why != null) {
                    throw new Refused(Code.FAILED_PRECONDITION, "black-box NF '" + b.nf + "' (" + b.program + "): "
                            + why);
                }
            }
        }
    }

    private static String why(Box b, boolean hugepages) {
        Path p = Paths.get(b.program);
        if (!Files.exists(p)) {
            return "not found";
        }
        if (!Files.isRegularFile(p) || !Files.isExecutable(p)) {
            return "not executable";
        }
        if (b.mode.equals("RING") && !hugepages) {
            return "MODE RING needs the agent on hugepages as the DPDK primary (multi-process)";
        }
        if (onNfLibrary(p)) {
            return null;
        }
        List<String> cmd = new ArrayList<>(List.of(b.program, "--proc-type=secondary", "--file-prefix",
                "metron-fake-agent", "--no-pci", "--lcores", "127@(0)", "--log-level", "lib.eal:error", "--"));
        cmd.addAll(b.args);
        try {
            Process proc = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (proc.waitFor(b.attachMs, TimeUnit.MILLISECONDS)) {
                int v = proc.exitValue();
                // Java reports a process a signal ended as 128 + the signal, as a shell does
                return "exited at start (" + (v > 128 ? "signal " + (v - 128) : "exit " + v) + ")";
            }
            proc.destroyForcibly().waitFor();
            return "did not attach within " + b.attachMs + " ms";
        } catch (IOException e) {
            return "not executable";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "did not attach within " + b.attachMs + " ms";
        }
    }

    private static boolean onNfLibrary(Path p) {
        try {
            byte[] bin = Files.readAllBytes(p);
            return new String(bin, StandardCharsets.ISO_8859_1).contains(READY_FD);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A group's black boxes as GetStats reports them: RUNNING with no traffic, or as a test set them. */
    static List<BlackBoxStats> stats(String pipeline, GroupSpec g, Map<String, BlackBoxStats> set) {
        List<BlackBoxStats> out = new ArrayList<>();
        for (Box b : of(g.getClickConfig())) {
            BlackBoxStats s = set.get(pipeline + "/" + b.nf);
            out.add(s != null ? s.toBuilder().setElement(b.element).build() : BlackBoxStats.newBuilder()
                    .setElement(b.element).setNf(b.nf).setMode(b.mode).setState("RUNNING").setOnFailure(b.onFailure)
                    .build());
        }
        return out;
    }
}
