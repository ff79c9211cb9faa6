package org.metron.synth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.synth.hs.Field;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A black-box NF (docs/blackbox.md): a program the agent runs as its own process, or an endpoint it attaches to,
 * with what it may do to packets declared. The synthesizer cuts the chain at it and treats it as an opaque
 * function: it may drop packets (if {@link #mayDrop()}) and change only the {@link #rewrites()} fields. Its one
 * input is {@code in0}, its one output {@code out0}. Immutable.
 */
public final class BlackBoxSpec {
    /** How packets reach the NF. */
    public enum Mode { RING, MEMIF, KERNEL }

    /** What the agent does with packets while the NF is down or not reading. */
    public enum OnFailure { CLOSED, OPEN }

    /** Whether the NF keeps per-flow state its flows must stay with. */
    public enum FlowStatePolicy { NONE, PINNED }

    /** The NF's one input interface. */
    public static final String INPUT = "in0";
    /** The NF's one output interface. */
    public static final String OUTPUT = "out0";
    /** Ring size and attach timeout the synthesizer writes into {@code BlackBoxNF} (the doc's values). */
    public static final int RING_SIZE = 1024;
    public static final int ATTACH_TIMEOUT_MS = 2000;

    /** Header fields a black box may declare it rewrites, by their chain-JSON names, and the model's fields. */
    public static final Map<String, List<Field>> REWRITABLE = rewritable();

    private static final Set<String> KEYS = Set.of("program", "endpoint", "args", "mode", "onFailure", "mayDrop",
            "rewrites", "flowState");
    /** Characters a program path or an argument may not hold: they would end or split a Click argument. */
    private static final String UNSAFE = "\",;()\\'";

    private final String program;
    private final String memif;
    private final List<String> args;
    private final Mode mode;
    private final OnFailure onFailure;
    private final boolean mayDrop;
    private final List<String> rewrites;
    private final FlowStatePolicy flowState;

    private BlackBoxSpec(String program, String memif, List<String> args, Mode mode, OnFailure onFailure,
                         boolean mayDrop, List<String> rewrites, FlowStatePolicy flowState) {
        this.program = program;
        this.memif = memif;
        this.args = List.copyOf(args);
        this.mode = Objects.requireNonNull(mode, "mode");
        this.onFailure = Objects.requireNonNull(onFailure, "onFailure");
        this.mayDrop = mayDrop;
        this.rewrites = List.copyOf(new TreeSet<>(rewrites));
        this.flowState = Objects.requireNonNull(flowState, "flowState");
    }

    /**
     * A black box that runs a program.
     *
     * @throws SynthesisException if the path is not absolute or a field is not one the doc allows
     */
    public static BlackBoxSpec program(String path, List<String> args, Mode mode, OnFailure onFailure,
                                       boolean mayDrop, List<String> rewrites, FlowStatePolicy flowState) {
        BlackBoxSpec b = new BlackBoxSpec(path, null, args, mode, onFailure, mayDrop, rewrites, flowState);
        b.check("black box");
        return b;
    }

    /**
     * Reads the {@code blackbox} object of an NF.
     *
     * @param where how errors name the NF, e.g. {@code nfs[1] (ids)}
     * @throws SynthesisException naming the NF and the field
     */
    static BlackBoxSpec fromJson(JsonNode o, String where) {
        String at = where + ".blackbox";
        ChainJsonFields.obj(o, at, KEYS);
        String program = text(o, "program", at);
        String memif = null;
        if (o.hasNonNull("endpoint")) {
            JsonNode e = o.get("endpoint");
            if (!e.isObject() || e.size() != 1 || !e.has("memif")) {
                throw err(at + ".endpoint must be {\"memif\": \"/path/to/socket\"}");
            }
            memif = text(e, "memif", at + ".endpoint");
        }
        if ((program == null) == (memif == null)) {
            throw err(at + " needs exactly one of 'program' (a path to run) and 'endpoint' (a memif socket to "
                    + "attach)");
        }
        List<String> args = new ArrayList<>();
        if (o.hasNonNull("args")) {
            JsonNode a = o.get("args");
            if (!a.isArray()) {
                throw err(at + ".args must be an array of strings");
            }
            for (JsonNode x : a) {
                if (!x.isTextual()) {
                    throw err(at + ".args[" + args.size() + "] must be a string");
                }
                args.add(x.asText());
            }
        }
        Mode mode = enumOf(Mode.class, text(o, "mode", at), memif != null ? Mode.MEMIF : Mode.RING, at + ".mode");
        OnFailure onFailure = enumOf(OnFailure.class, text(o, "onFailure", at), OnFailure.CLOSED, at + ".onFailure");
        FlowStatePolicy flow = enumOf(FlowStatePolicy.class, text(o, "flowState", at), FlowStatePolicy.NONE,
                at + ".flowState");
        boolean mayDrop = ChainJsonFields.bool(o, "mayDrop", at, true);
        List<String> rewrites = new ArrayList<>();
        if (o.hasNonNull("rewrites")) {
            JsonNode r = o.get("rewrites");
            if (!r.isArray()) {
                throw err(at + ".rewrites must be an array of field names " + REWRITABLE.keySet());
            }
            for (JsonNode x : r) {
                if (!x.isTextual() || !REWRITABLE.containsKey(x.asText())) {
                    throw err(at + ".rewrites[" + rewrites.size() + "] " + x + " is not a field the synthesizer "
                            + "knows; allowed: " + REWRITABLE.keySet());
                }
                rewrites.add(x.asText());
            }
        }
        BlackBoxSpec b = new BlackBoxSpec(program, memif, args, mode, onFailure, mayDrop, rewrites, flow);
        b.check(at);
        return b;
    }

    private void check(String at) {
        if (program != null) {
            if (!program.startsWith("/")) {
                throw err(at + ".program '" + program + "' must be an absolute path (the agent runs it on its "
                        + "server, never relative to a working directory)");
            }
            checkSafe(program, at + ".program");
        }
        if (memif != null) {
            if (!memif.startsWith("/")) {
                throw err(at + ".endpoint.memif '" + memif + "' must be an absolute path");
            }
            checkSafe(memif, at + ".endpoint.memif");
            if (mode != Mode.MEMIF) {
                throw err(at + ".mode must be \"memif\" for a memif endpoint, not \"" + name(mode) + "\"");
            }
        }
        for (int i = 0; i < args.size(); i++) {
            checkSafe(args.get(i), at + ".args[" + i + "]");
            if (args.get(i).isEmpty()) {
                throw err(at + ".args[" + i + "] is empty");
            }
        }
    }

    private static void checkSafe(String s, String at) {
        for (char c : s.toCharArray()) {
            if (Character.isWhitespace(c) || UNSAFE.indexOf(c) >= 0 || c < 0x20) {
                throw err(at + " '" + s + "' holds '" + c + "': whitespace and " + UNSAFE + " are not allowed "
                        + "(one argument per array entry)");
            }
        }
    }

    /** An optional string field ({@link ChainJsonFields#str}). */
    private static String text(JsonNode o, String key, String at) {
        return ChainJsonFields.str(o, key, at, false);
    }

    private static <E extends Enum<E>> E enumOf(Class<E> type, String v, E dflt, String at) {
        if (v == null) {
            return dflt;
        }
        for (E e : type.getEnumConstants()) {
            if (name(e).equals(v)) {
                return e;
            }
        }
        List<String> ok = new ArrayList<>();
        for (E e : type.getEnumConstants()) {
            ok.add(name(e));
        }
        throw err(at + " '" + v + "' is not one of " + ok);
    }

    private static String name(Enum<?> e) {
        return e.name().toLowerCase(java.util.Locale.ROOT);
    }

    private static SynthesisException err(String m) {
        return new SynthesisException("chain JSON: " + m);
    }

    /** Writes the {@code blackbox} object back (the form {@link #fromJson} reads). */
    void toJson(ObjectNode o) {
        if (program != null) {
            o.put("program", program);
        } else {
            o.putObject("endpoint").put("memif", memif);
        }
        args.forEach(o.putArray("args")::add);
        o.put("mode", name(mode));
        o.put("onFailure", name(onFailure));
        o.put("mayDrop", mayDrop);
        rewrites.forEach(o.putArray("rewrites")::add);
        o.put("flowState", name(flowState));
    }

    /** The program the agent runs, if this black box is one. */
    public Optional<String> program() {
        return Optional.ofNullable(program);
    }

    /** The memif socket the agent attaches to, if this black box is an endpoint. */
    public Optional<String> memifEndpoint() {
        return Optional.ofNullable(memif);
    }

    public List<String> args() {
        return args;
    }

    public Mode mode() {
        return mode;
    }

    public OnFailure onFailure() {
        return onFailure;
    }

    public boolean mayDrop() {
        return mayDrop;
    }

    /** Fields it may rewrite, by chain-JSON name, sorted. */
    public List<String> rewrites() {
        return rewrites;
    }

    /** The model's fields it may rewrite. */
    public Set<Field> rewrittenFields() {
        Set<Field> out = java.util.EnumSet.noneOf(Field.class);
        rewrites.forEach(r -> out.addAll(REWRITABLE.get(r)));
        return out;
    }

    public FlowStatePolicy flowState() {
        return flowState;
    }

    /**
     * The agent's element for this NF (docs/blackbox.md "The agent's element"):
     * {@code BlackBoxNF(NAME n, PROGRAM p, ARGS "a b", MODE RING, ON_FAILURE CLOSED, RING_SIZE 1024,
     * ATTACH_TIMEOUT 2000)}; a memif endpoint is {@code ENDPOINT path} in place of {@code PROGRAM}.
     */
    public String element(String nfName) {
        return "BlackBoxNF(" + elementArgs(nfName) + ")";
    }

    /** The arguments of {@link #element}, as written there. */
    public String elementArgs(String nfName) {
        StringBuilder sb = new StringBuilder("NAME ").append(nfName);
        if (program != null) {
            sb.append(", PROGRAM ").append(program);
        } else {
            sb.append(", ENDPOINT ").append(memif);
        }
        if (!args.isEmpty()) {
            sb.append(", ARGS \"").append(String.join(" ", args)).append('"');
        }
        return sb.append(", MODE ").append(mode).append(", ON_FAILURE ").append(onFailure).append(", RING_SIZE ")
                .append(RING_SIZE).append(", ATTACH_TIMEOUT ").append(ATTACH_TIMEOUT_MS).toString();
    }

    /** What the synthesizer assumes of it, for the stateful key and traces. */
    public String declared() {
        return (mayDrop ? "may drop" : "never drops") + ", rewrites " + (rewrites.isEmpty() ? "nothing" : rewrites)
                + (flowState == FlowStatePolicy.PINNED ? ", flows pinned" : "");
    }

    private static Map<String, List<Field>> rewritable() {
        Map<String, List<Field>> m = new LinkedHashMap<>();
        m.put("eth_src", List.of(Field.ETH_SRC));
        m.put("eth_dst", List.of(Field.ETH_DST));
        m.put("ip_src", List.of(Field.IP4_SRC, Field.IP6_SRC_HI, Field.IP6_SRC_LO));
        m.put("ip_dst", List.of(Field.IP4_DST, Field.IP6_DST_HI, Field.IP6_DST_LO));
        m.put("ip_tos", List.of(Field.TOS));
        m.put("ip_ttl", List.of(Field.TTL));
        m.put("tp_src", List.of(Field.L4_SRC));
        m.put("tp_dst", List.of(Field.L4_DST));
        return java.util.Collections.unmodifiableMap(m);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof BlackBoxSpec)) {
            return false;
        }
        BlackBoxSpec b = (BlackBoxSpec) o;
        return Objects.equals(program, b.program) && Objects.equals(memif, b.memif) && args.equals(b.args)
                && mode == b.mode && onFailure == b.onFailure && mayDrop == b.mayDrop && rewrites.equals(b.rewrites)
                && flowState == b.flowState;
    }

    @Override
    public int hashCode() {
        return Objects.hash(program, memif, args, mode, onFailure, mayDrop, rewrites, flowState);
    }

    @Override
    public String toString() {
        return element("?");
    }
}
