package org.metron.synth.bench;

import org.metron.synth.InterfaceRef;
import org.metron.synth.core.ChainModel;
import org.metron.synth.core.NfGraph;
import org.metron.synth.elements.Element;
import org.metron.synth.elements.IpClassifier;
import org.metron.synth.elements.RouteLookup;
import org.metron.synth.hs.Cube;

import java.util.ArrayList;
import java.util.List;

/**
 * Benchmark baseline: SNF-style naive pairwise product. Every classifier of the chain (in NF order) is
 * crossed with every other: each combination of one rule per classifier is intersected and kept if not
 * empty. No path sensitivity (denied traffic still meets later NFs), no first-match pruning, no split or
 * compile: it only enumerates candidate classes, so it is a lower bound on what such a synthesizer spends.
 */
public final class NaiveProduct {
    private NaiveProduct() {
    }

    /** Number of non-empty rule combinations. */
    public static int classes(ChainModel chain) {
        List<List<Cube>> classifiers = new ArrayList<>();
        String nf = chain.spec.ingress().get(0).nf();
        for (int hops = 0; nf != null && hops < 64; hops++) {
            NfGraph g = chain.nf(nf);
            for (Element e : g.elements().values()) {
                if (e instanceof IpClassifier) {
                    List<Cube> rules = new ArrayList<>();
                    ((IpClassifier) e).ruleCubes().forEach(rules::addAll);
                    classifiers.add(rules);
                } else if (e instanceof RouteLookup) {
                    classifiers.add(((RouteLookup) e).routeCubes());
                }
            }
            String next = null;
            for (org.metron.synth.ChainLink l : chain.spec.links()) {
                if (l.from().nf().equals(nf)) {
                    InterfaceRef to = l.to();
                    next = to.nf();
                }
            }
            nf = next;
        }
        List<Cube> acc = List.of(Cube.ALL);
        for (List<Cube> rules : classifiers) {
            List<Cube> next = new ArrayList<>(acc.size() * 2);
            for (Cube a : acc) {
                for (Cube r : rules) {
                    Cube x = a.intersect(r);
                    if (x != null) {
                        next.add(x);
                    }
                }
            }
            acc = next;
        }
        return acc.size();
    }
}
