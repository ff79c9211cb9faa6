package org.metron.synth.core;

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

/**
 * Synthesis: walks the chain symbolically from the ingress, depth first, each element emitting its branches in
 * first-match order. Every leaf (egress or drop) becomes one filter entry; the entries' order is the global
 * first-match order, so a packet belongs to the class of the first entry it matches. Leaves with the same
 * operations (egress, stateless writes, TTL decrements, stateful operation) share a class.
 */
public final class Synthesis {
    /** What a class does; equal keys = same class. */
    public static final class ClassInfo {
        public final int id;
        public final int egress;
        public final Map<Field, Long> writes;
        public final int ttlDec;
        public final List<StatefulStep> steps;
        public final String stateful;
        final String key;

        ClassInfo(int id, int egress, Map<Field, Long> writes, int ttlDec, List<StatefulStep> steps, String key) {
            this.id = id;
            this.egress = egress;
            this.writes = writes;
            this.ttlDec = ttlDec;
            this.steps = steps;
            this.stateful = egress < 0 ? "" : SynthOps.canonical(steps);
            this.key = key;
        }

        public boolean drops() {
            return egress < 0;
        }
    }

    public final List<Cube> entries = new ArrayList<>();
    private int[] entryClass = new int[1024];
    public final List<ClassInfo> classes = new ArrayList<>();
    private final Map<String, ClassInfo> byKey = new HashMap<>();
    private final ChainModel chain;
    private final Map<Element, Boolean> onPath = new IdentityHashMap<>();

    private Synthesis(ChainModel chain) {
        this.chain = chain;
    }

    /** Synthesizes a parsed chain (IPv4 and IPv6 packets). */
    public static Synthesis of(ChainModel chain) {
        Synthesis s = new Synthesis(chain);
        Cube ip = Cube.of(Field.ETH_TYPE, IntervalSet.union(IntervalSet.point(Field.ETH_IP4),
                IntervalSet.point(Field.ETH_IP6)));
        s.enter(chain.ingressNf(), chain.ingress(), SymState.initial(ip));
        return s;
    }

    /** Class of entry i. */
    public int entryClass(int i) {
        return entryClass[i];
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
                leaf(t, -1);
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
        leaf(s, k);
    }

    private void leaf(SymState s, int egress) {
        Map<Field, Long> writes = new EnumMap<>(Field.class);
        StringBuilder key = new StringBuilder();
        int ttl = 0;
        List<StatefulStep> steps = List.of();
        if (egress >= 0) {
            for (Field f : Field.values()) {
                long[] v = s.current(f);
                if (v != null && !s.statefulWrite(f)) {
                    writes.put(f, v[0]);
                }
            }
            ttl = s.ttlDec;
            steps = s.steps;
            key.append(egress).append('|').append(writes).append('|').append(ttl).append('|')
                    .append(SynthOps.canonical(steps));
        } else {
            key.append("drop");
        }
        String k = key.toString();
        ClassInfo c = byKey.get(k);
        if (c == null) {
            c = new ClassInfo(classes.size(), egress, writes, ttl, steps, k);
            classes.add(c);
            byKey.put(k, c);
        }
        int i = entries.size();
        if (i == entryClass.length) {
            entryClass = java.util.Arrays.copyOf(entryClass, i * 2);
        }
        entryClass[i] = c.id;
        entries.add(s.filter);
    }

    /** Throws if the chain produced more classes than tags can carry. */
    public void checkLimits() {
        // class indices ffff (unclassified) and fffe (egress marker) are reserved (docs/contracts.md#tags)
        if (classes.size() > 0xFFFE) {
            throw new SynthesisException("chain '" + chain.spec.name() + "' has " + classes.size()
                    + " traffic classes; tags carry at most 65534 (0..65533)");
        }
    }
}
