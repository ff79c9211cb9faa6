package org.metron.synth.elements;

import org.metron.synth.click.Arg;
import org.metron.synth.click.ElementDecl;
import org.metron.synth.core.Out;
import org.metron.synth.core.Run;
import org.metron.synth.core.SymState;
import org.metron.synth.hs.Cube;
import org.metron.synth.hs.Field;
import org.metron.synth.hs.IntervalSet;
import org.metron.synth.packet.Packet;

import java.util.EnumMap;
import java.util.Map;
import java.util.Set;

/**
 * Stateless layer-2 writes: EtherRewrite(SRC, DST), StoreEtherAddress(ADDR, src|dst), EtherEncap(TYPE, SRC,
 * DST) (re-adds 14 stripped bytes; Metron drops packets whose IP family does not match TYPE, since the result
 * would not be a valid frame), VLANEncap(VLAN_ID n) and VLANDecap. VLAN tags are packet metadata here (the
 * agent pops/pushes them at the edges).
 */
public final class L2Write extends Element {
    private final Map<Field, Long> writes = new EnumMap<>(Field.class);
    private final int unstrip;
    private final Long family;

    L2Write(String nf, ElementDecl decl) {
        super(nf, decl);
        String cls = decl.className();
        Long fam = null;
        int un = 0;
        switch (cls) {
            case "EtherRewrite":
                requireArgs(2, 2);
                writes.put(Field.ETH_SRC, mac(decl.args().get(0)));
                writes.put(Field.ETH_DST, mac(decl.args().get(1)));
                break;
            case "StoreEtherAddress": {
                requireArgs(2, 2);
                String where = decl.args().get(1).text().trim();
                Field f = where.equals("src") || where.equals("6") ? Field.ETH_SRC
                        : where.equals("dst") || where.equals("0") ? Field.ETH_DST : null;
                if (f == null) {
                    throw error(decl.args().get(1), "StoreEtherAddress OFFSET must be src, dst, 0 or 6");
                }
                writes.put(f, mac(decl.args().get(0)));
                break;
            }
            case "EtherEncap": {
                requireArgs(3, 3);
                Arg t = decl.args().get(0);
                long type;
                try {
                    type = Long.decode(t.text().trim());
                } catch (NumberFormatException e) {
                    throw error(t, "EtherEncap TYPE must be a number like 0x0800, found '" + t.text() + "'");
                }
                if (type != Field.ETH_IP4 && type != Field.ETH_IP6) {
                    throw error(t, "unsupported construct: EtherEncap TYPE must be 0x0800 or 0x86DD");
                }
                fam = type;
                writes.put(Field.ETH_SRC, mac(decl.args().get(1)));
                writes.put(Field.ETH_DST, mac(decl.args().get(2)));
                un = 14;
                break;
            }
            case "VLANEncap": {
                Args a = new Args(decl.args(), Set.of("VLAN_ID", "VLAN_TCI", "VLAN_PCP", "ETHERTYPE"));
                Arg id = a.keywords.containsKey("VLAN_ID") ? a.keywords.get("VLAN_ID")
                        : a.keywords.getOrDefault("VLAN_TCI", a.positional.isEmpty() ? null : a.positional.get(0));
                if (id == null) {
                    throw error("VLANEncap needs VLAN_ID");
                }
                long v;
                try {
                    v = Long.decode(id.text().trim()) & 0xfff;
                } catch (NumberFormatException e) {
                    throw error(id, "VLAN id must be a number, found '" + id.text() + "'");
                }
                if (v == 0) {
                    throw error(id, "VLAN id must be 1..4095");
                }
                writes.put(Field.VLAN, v);
                break;
            }
            case "VLANDecap":
                writes.put(Field.VLAN, 0L);
                break;
            default:
                throw new IllegalArgumentException(cls);
        }
        unstrip = un;
        family = fam;
    }

    static long mac(Arg a) {
        String t = a.text().trim();
        if (!t.matches("[0-9A-Fa-f]{1,2}(:[0-9A-Fa-f]{1,2}){5}")) {
            throw new org.metron.synth.SynthesisException(null, null, a.line(), a.column(),
                    "expected an Ethernet address like 02:00:00:00:00:01, found '" + t + "'");
        }
        long v = 0;
        for (String b : t.split(":")) {
            v = (v << 8) | Long.parseLong(b, 16);
        }
        return v;
    }

    @Override
    public int inputs() {
        return 1;
    }

    @Override
    public int outputs() {
        return 1;
    }

    @Override
    public int push(Packet p, int in, Run run) {
        if (unstrip > 0) {
            if (p.get(Field.ETH_TYPE) != family) {
                if (run.trace != null) {
                    run.droppedBy = id();
                }
                return Out.DROP;
            }
            run.stripped -= unstrip;
        }
        writes.forEach(p::set);
        return 0;
    }

    @Override
    public void walk(SymState s, int in, Out out) {
        SymState t = s;
        if (unstrip > 0) {
            if (s.stripped < unstrip) {
                throw error("EtherEncap needs the Ethernet header stripped first (Strip(14))");
            }
            // the matching family first; the rest of the state (the other family) after it is dropped
            t = restrict(s, Cube.of(Field.ETH_TYPE, IntervalSet.point(family)));
            if (t == null) {
                out.emit(Out.DROP, s);
                return;
            }
            SymState match = t.strip(-unstrip);
            for (Map.Entry<Field, Long> w : writes.entrySet()) {
                match = match.write(w.getKey(), IntervalSet.point(w.getValue()), false);
            }
            out.emit(0, match);
            if (t != s) {
                out.emit(Out.DROP, s);
            }
            return;
        } else if (!decl.className().startsWith("VLAN")) {
            requireEthernet(s);
        }
        for (Map.Entry<Field, Long> w : writes.entrySet()) {
            t = t.write(w.getKey(), IntervalSet.point(w.getValue()), false);
        }
        out.emit(0, t);
    }
}
