package org.metron.synth.elements;

import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;
import org.metron.synth.packet.Packet;

/**
 * DecIPTTL: packets with TTL (IPv6: hop limit) &le; 1 go to output 1 if connected, else are dropped; others
 * get TTL - 1 on output 0.
 */
public final class DecIpTtl extends Element {
    private static final Cube ALIVE = Cube.of(Field.TTL, IntervalSet.range(2, 255));
    private static final Cube EXPIRED = Cube.of(Field.TTL, IntervalSet.range(0, 1));
    private boolean expiredPort;

    DecIpTtl(String nf, ElementDecl decl) {
        super(nf, decl);
        requireArgs(0, 1);
    }

    /** Called by the graph builder when output 1 is connected. */
    void hasExpiredPort() {
        expiredPort = true;
    }

    @Override
    public int inputs() {
        return 1;
    }

    @Override
    public int outputs() {
        return 2;
    }

    @Override
    public int push(Packet p, int in, Run run) {
        long ttl = p.get(Field.TTL);
        if (ttl <= 1) {
            if (run.trace != null) {
                run.droppedBy = expiredPort ? null : id();
            }
            return expiredPort ? 1 : Out.DROP;
        }
        p.set(Field.TTL, ttl - 1);
        return 0;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        requireIp(s);
        if (!expiredPort) {
            // no split: the decrement itself drops expired packets wherever it runs (DecIPTTL on the server,
            // dec_ttl on a switch), so classes need not test the TTL and stay offloadable
            out.emit(0, s.decTtl());
            return;
        }
        SymState alive = restrict(s, ALIVE);
        if (alive != null) {
            out.emit(0, alive.decTtl());
        }
        SymState dead = restrict(s, EXPIRED);
        if (dead != null) {
            out.emit(expiredPort ? 1 : Out.DROP, dead);
        }
    }
}
