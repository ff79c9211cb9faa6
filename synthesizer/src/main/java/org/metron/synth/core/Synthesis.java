package org.metron.synth.core;

import org.metron.synth.BlackBoxSpec;
import org.metron.synth.InterfaceRef;
import org.metron.synth.SynthesisException;
import org.metron.synth.elements.Device;
import org.metron.synth.elements.Element;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Synthesis: walks the chain symbolically from the ingress, depth first, each element emitting its branches in
 * first-match order. Every leaf (egress or drop) becomes one filter entry; the entries' order is the global
 * first-match order, so a packet belongs to the class of the first entry it matches. Leaves with the same
 * operations (egress, stateless writes, TTL decrements, stateful operation) share a class.
 * <p>
 * A chain with a reply ingress (its second ingress) is walked again from there, after the forward walk, into
 * a second entry list: reply classes, whose stateful part is input 1 of the SynthRewriter that holds the
 * forward flows they answer (the forward classes whose composed pool the reply's steps undo).
 */
public final class Synthesis {
    /** What a class does; equal keys = same class. */
    public static final class ClassInfo {
        public final int id;
        public final int egress;
        public final Map<Field, Long> writes;
        public final int ttlDec;
        public final List<StatefulStep> steps;
        /** The stateful operation; for a reply class, that of the forward classes whose flows it answers. */
        public final String stateful;
        /** True for a class of the reply ingress. */
        public final boolean reply;
        /** The black box its packets go to next (then classified again), or null: see {@link BoxCut}. */
        public final BoxCut box;
        final String key;

        ClassInfo(int id, int egress, Map<Field, Long> writes, int ttlDec, List<StatefulStep> steps, String stateful,
                  boolean reply, BoxCut box, String key) {
            this.box = box;
            this.id = id;
            this.egress = egress;
            this.writes = writes;
            this.ttlDec = ttlDec;
            this.steps = steps;
            this.stateful = stateful;
            this.reply = reply;
            this.key = key;
        }

        /** True for a reply class answered by a SynthRewriter's input 1. */
        public boolean repliesThroughRewriter() {
            return reply && !steps.isEmpty() && egress >= 0;
        }

        public boolean drops() {
            return egress < 0;
        }
    }

    /**
     * Where a class's packets meet a black box (docs/blackbox.md): the class ends there (its writes, TTL decrements
     * and stateful steps are what its packets get before the box; its last step is the box), and what follows the
     * box is synthesized on its own, from the box's output, over the packets as the box hands them back: the
     * switch classified them before the box, which may have rewritten what it declares, so the agent classifies
     * them again in software with {@link #after}'s entries.
     */
    public static final class BoxCut {
        public final String nf;
        public final BlackBoxSpec spec;
        /** The synthesis of the chain from the box's output on (its forward entries and classes). */
        public final Synthesis after;

        BoxCut(String nf, BlackBoxSpec spec, Synthesis after) {
            this.nf = nf;
            this.spec = spec;
            this.after = after;
        }
    }

    /** Filter entries of one ingress in first-match order, each with its class. */
    public static final class Entries {
        public final List<Cube> cubes = new ArrayList<>();
        private int[] cls = new int[1024];

        void add(Cube c, int classId) {
            int i = cubes.size();
            if (i == cls.length) {
                cls = java.util.Arrays.copyOf(cls, i * 2);
            }
            cls[i] = classId;
            cubes.add(c);
        }

        /** Class of entry i. */
        public int classOf(int i) {
            return cls[i];
        }

        public int size() {
            return cubes.size();
        }
    }

    /** Forward entries (ingress 0). */
    public final Entries forward = new Entries();
    /** Reply entries (ingress 1; empty without a reply ingress). */
    public final Entries reply = new Entries();
    /** Forward entries' cubes (= forward.cubes). */
    public final List<Cube> entries = forward.cubes;
    private Entries current = forward;
    public final List<ClassInfo> classes = new ArrayList<>();
    private final Map<String, ClassInfo> byKey = new HashMap<>();
    private final ChainModel chain;
    private final Map<Element, Boolean> onPath = new IdentityHashMap<>();
    /** Reply rewriter text -> stateful operation of the forward classes it answers (null: none). */
    private final Map<String, String> homes = new HashMap<>();
    /** Per forward class with state: the headers a reply to one of its flows can carry, one cube per leaf. */
    private final Map<Integer, List<Cube>> replySpaces = new HashMap<>();
    /** Fields a reply carries swapped: its source is the forward packet's destination and vice versa. */
    private static final Field[][] SWAPPED = {{Field.IP4_SRC, Field.IP4_DST}, {Field.IP6_SRC_HI, Field.IP6_DST_HI},
            {Field.IP6_SRC_LO, Field.IP6_DST_LO}, {Field.L4_SRC, Field.L4_DST}};

    /** The syntheses after each black box, shared by the chain's walk and those after its boxes. */
    private final Map<String, Synthesis> cuts;
    /** Black boxes whose synthesis after them is being built (a chain that leads back into one is a cycle). */
    private final java.util.Set<String> cutting;

    private Synthesis(ChainModel chain, Map<String, Synthesis> cuts, java.util.Set<String> cutting) {
        this.chain = chain;
        this.cuts = cuts;
        this.cutting = cutting;
    }

    /** Synthesizes a parsed chain (IPv4 and IPv6 packets). */
    public static Synthesis of(ChainModel chain) {
        Synthesis s = new Synthesis(chain, new HashMap<>(), new java.util.HashSet<>());
        Cube ip = ipPackets();
        s.enter(chain.ingressNf(0), chain.ingress(0), SymState.initial(ip, false));
        if (chain.ingresses() > 1) {
            s.current = s.reply;
            s.enter(chain.ingressNf(1), chain.ingress(1), SymState.initial(ip, true));
        }
        return s;
    }

    private static Cube ipPackets() {
        return Cube.of(Field.ETH_TYPE, IntervalSet.union(IntervalSet.point(Field.ETH_IP4),
                IntervalSet.point(Field.ETH_IP6)));
    }

    /** The synthesis of the chain after black box {@code nf}, or null if no packet reaches it. */
    public Synthesis afterBox(String nf) {
        return cuts.get(nf);
    }

    /** Black boxes packets reach, by name (each with its synthesis after it), in no particular order. */
    public java.util.Set<String> boxes() {
        return java.util.Collections.unmodifiableSet(cuts.keySet());
    }

    /**
     * The synthesis from black box {@code box}'s output on (built once per box): fresh IPv4 and IPv6 packets, as
     * the box may hand back anything of what it declares, walked from the NF its output links to (or straight
     * to an egress, or into the next box).
     */
    private Synthesis cutAt(String box) {
        Synthesis known = cuts.get(box);
        if (known != null) {
            return known;
        }
        if (!cutting.add(box)) {
            throw new SynthesisException(box, null, 0, 0, "cycle: the chain's links lead packets back into black "
                    + "box '" + box + "'");
        }
        Synthesis a = new Synthesis(chain, cuts, cutting);
        SymState init = SymState.initial(ipPackets(), false);
        InterfaceRef next = chain.link(box, BlackBoxSpec.OUTPUT);
        if (next == null) {
            int k = chain.egressIndex(box, BlackBoxSpec.OUTPUT);
            if (k < 0) {
                throw new SynthesisException(box, null, 0, 0, "dangling edge: packets leave black box " + box + "."
                        + BlackBoxSpec.OUTPUT + ", which is neither linked to another NF nor a chain egress");
            }
            a.leaf(init, k, null);
        } else if (chain.blackBox(next.nf()) != null) {
            a.leaf(init, 0, a.cut(next.nf()));
        } else {
            NfGraph nn = chain.nf(next.nf());
            a.enter(nn, nn.source(next.iface()), init);
        }
        for (Cube c : a.entries) {
            if (c.get(Field.ETH_DST) != null) {
                throw new SynthesisException(next == null ? box : next.nf(), null, 0, 0, "unsupported construct: "
                        + "after black box '" + box + "' the chain tests the destination MAC, which the agent's "
                        + "copy of the packet carries the class tag in (docs/contracts.md#tags)");
            }
        }
        cutting.remove(box);
        cuts.put(box, a);
        return a;
    }

    private BoxCut cut(String box) {
        return new BoxCut(box, chain.blackBox(box), cutAt(box));
    }

    /** The first egress a class of this synthesis leaves by (0 if they all drop). */
    int firstEgress() {
        for (ClassInfo c : classes) {
            if (!c.drops()) {
                return c.egress;
            }
        }
        return 0;
    }

    /** Class of forward entry i. */
    public int entryClass(int i) {
        return forward.classOf(i);
    }

    private void enter(NfGraph nf, Device source, SymState s) {
        follow(nf, source, 0, s);
    }

    private void follow(NfGraph nf, Element from, int port, SymState s) {
        NfGraph.Hop h = nf.next(from, port);
        if (h == null) {
            throw from.error("output " + port + " of " + from.name() + " is not connected, but packets reach it");
        }
        visit(nf, h.to, h.port, s);
    }

    private void visit(NfGraph nf, Element e, int in, SymState s) {
        if (e instanceof Device) {
            leave(nf, (Device) e, s);
            return;
        }
        if (onPath.put(e, Boolean.TRUE) != null) {
            throw e.error("cycle: packets reach " + e.name() + " again on the same path");
        }
        e.walk(s, in, (port, t) -> {
            if (port == Out.DROP) {
                leaf(t, -1, null);
            } else {
                follow(nf, e, port, t);
            }
        });
        onPath.remove(e);
    }

    private void leave(NfGraph nf, Device sink, SymState s) {
        if (s.stripped != 0) {
            throw sink.error("packets reach " + sink.decl().className() + "(" + sink.iface() + ") with " + s.stripped
                    + " header bytes stripped (missing Unstrip/EtherEncap)");
        }
        InterfaceRef next = chain.link(nf.nf, sink.iface());
        if (next != null && chain.blackBox(next.nf()) != null) {
            leaf(s, 0, cut(next.nf()));
            return;
        }
        if (next != null) {
            NfGraph nn = chain.nf(next.nf());
            Device src = nn.source(next.iface());
            if (onPath.put(src, Boolean.TRUE) != null) {
                throw src.error("cycle: the chain's links lead packets back into " + next);
            }
            // a new NF sees an Ethernet frame again: its own Strip/CheckIPHeader re-mark the header
            enter(nn, src, s.strip(0).withIpUnmarked());
            onPath.remove(src);
            return;
        }
        int k = chain.egressIndex(nf.nf, sink.iface());
        if (k < 0) {
            throw sink.error("dangling edge: packets leave " + nf.nf + "." + sink.iface()
                    + ", which is neither linked to another NF nor a chain egress");
        }
        leaf(s, k, null);
    }

    /**
     * A walk ends: at an egress, a drop (egress -1), or at a black box ({@code box} non-null: the class's
     * packets go to it, their egress is where the first of the classes after it leaves).
     */
    private void leaf(SymState s, int egress, BoxCut box) {
        if (box != null) {
            s = s.step(StatefulStep.blackBox(box.nf, box.spec.elementArgs(box.nf)));
            egress = box.after.firstEgress();
        }
        Map<Field, Long> writes = new EnumMap<>(Field.class);
        StringBuilder key = new StringBuilder();
        int ttl = 0;
        List<StatefulStep> steps = List.of();
        boolean reply = current == this.reply;
        String stateful = "";
        if (reply && egress >= 0 && !s.steps.isEmpty()) {
            stateful = home(s.steps);
            if (stateful == null) {
                egress = -1;  // no forward flow is rewritten this way: no reply can find a mapping
            }
        }
        if (reply) {
            key.append("reply|");
        }
        if (egress >= 0) {
            for (Field f : Field.values()) {
                long[] v = s.current(f);
                if (v != null && !s.statefulWrite(f)) {
                    writes.put(f, v[0]);
                }
            }
            ttl = s.ttlDec;
            steps = s.steps;
            if (!reply) {
                stateful = SynthOps.canonical(steps);
            }
            if (box != null) {
                key.append("box ").append(box.nf).append('|');
            }
            key.append(egress).append('|').append(writes).append('|').append(ttl).append('|').append(stateful);
        } else {
            key.append("drop");
        }
        String k = key.toString();
        ClassInfo c = byKey.get(k);
        if (c == null) {
            c = new ClassInfo(classes.size(), egress, writes, ttl, steps, stateful, reply, box, k);
            classes.add(c);
            byKey.put(k, c);
        }
        current.add(s.filter, c.id);
        if (!reply && egress >= 0 && !steps.isEmpty()) {
            replySpaces.computeIfAbsent(c.id, x -> new ArrayList<>()).add(replySpace(s));
        }
    }

    /**
     * The headers of replies to the flows of a forward leaf: the packet as it leaves the chain (written fields
     * at their current values), addresses and ports swapped. Fields a peer may set freely in its reply (TTL,
     * TOS, flags, MACs) are left open, so the cube over-approximates.
     */
    private static Cube replySpace(SymState s) {
        Cube out = Cube.ALL;
        for (Field f : new Field[]{Field.ETH_TYPE, Field.IP_PROTO}) {
            out = narrow(out, f, egressValues(s, f));
        }
        for (Field[] pair : SWAPPED) {
            out = narrow(out, pair[1], egressValues(s, pair[0]));
            out = narrow(out, pair[0], egressValues(s, pair[1]));
        }
        return out;
    }

    private static long[] egressValues(SymState s, Field f) {
        long[] v = s.current(f);
        return v != null ? v : s.filter.get(f);
    }

    private static Cube narrow(Cube c, Field f, long[] values) {
        if (c == null || values == null) {
            return c;
        }
        return c.with(f, values);
    }

    /**
     * Which forward classes each reply class answers: reply class id → the forward classes (same stateful
     * operation, so the same flow table) some of whose flows' replies its filter entries can match. Computed
     * from header spaces, so it over-approximates (first-match order among reply entries is ignored); a reply
     * class that needs no flow state answers none. Sorted ids.
     */
    public Map<Integer, List<Integer>> replyAnswers() {
        Map<Integer, List<Cube>> entries = new HashMap<>();
        for (int i = 0; i < reply.size(); i++) {
            entries.computeIfAbsent(reply.classOf(i), x -> new ArrayList<>()).add(reply.cubes.get(i));
        }
        Map<Integer, List<Integer>> out = new TreeMap<>();
        for (ClassInfo r : classes) {
            if (!r.reply || r.drops()) {
                continue;
            }
            TreeSet<Integer> answered = new TreeSet<>();
            for (ClassInfo f : classes) {
                if (!f.reply && r.repliesThroughRewriter() && f.stateful.equals(r.stateful)
                        && overlap(entries.getOrDefault(r.id, List.of()), replySpaces.getOrDefault(f.id, List.of()))) {
                    answered.add(f.id);
                }
            }
            out.put(r.id, List.copyOf(answered));
        }
        return out;
    }

    private static boolean overlap(List<Cube> a, List<Cube> b) {
        for (Cube x : a) {
            for (Cube y : b) {
                if (y != null && x.overlaps(y)) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * The stateful operation of the forward classes whose flows replies with these steps answer, or null if
     * no forward class rewrites that way.
     *
     * @throws SynthesisException if the reply path meets other stateful work, or two forward operations keep
     *                            such flows (the reply could not tell whose flow table to look in)
     */
    private String home(List<StatefulStep> steps) {
        for (StatefulStep st : steps) {
            if (st.kind != StatefulStep.Kind.REPLY) {
                throw new SynthesisException("unsupported construct: chain '" + chain.spec.name() + "': reply "
                        + "traffic passes " + st.where + " (" + st.kind.name().toLowerCase(java.util.Locale.ROOT)
                        + ") as well as rewriter reply inputs; reply paths may only undo rewrites");
            }
        }
        String rw = SynthOps.rewriter(steps);
        if (homes.containsKey(rw)) {
            return homes.get(rw);
        }
        String found = null;
        for (ClassInfo c : classes) {
            if (!c.reply && !c.drops() && SynthOps.rewriter(c.steps).equals(rw)) {
                if (found != null && !found.equals(c.stateful)) {
                    throw new SynthesisException("unsupported construct: chain '" + chain.spec.name() + "': "
                            + "replies undoing " + rw + " could belong to flows of '" + found + "' or of '"
                            + c.stateful + "', which keep separate flow tables");
                }
                found = c.stateful;
            }
        }
        homes.put(rw, found);  // forward classes are all known: the reply walk comes after the forward one
        return found;
    }

    /** Throws if the chain produced more classes than tags can carry. */
    public void checkLimits() {
        // class indices ffff/fffd (unclassified forward/reply) and fffe (egress marker) are reserved
        // (docs/contracts.md#tags)
        if (classes.size() > 0xFFFD) {
            throw new SynthesisException("chain '" + chain.spec.name() + "' has " + classes.size()
                    + " traffic classes; tags carry at most 65533 (0..65532)");
        }
    }
}
