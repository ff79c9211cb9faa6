package org.metron.drivers.p4;

import com.google.protobuf.ByteString;
import com.google.protobuf.TextFormat;
import org.onlab.util.ImmutableByteSequence;
import org.onosproject.net.pi.runtime.PiAction;
import org.onosproject.net.pi.runtime.PiActionParam;
import org.onosproject.net.pi.runtime.PiExactFieldMatch;
import org.onosproject.net.pi.runtime.PiFieldMatch;
import org.onosproject.net.pi.runtime.PiRangeFieldMatch;
import org.onosproject.net.pi.runtime.PiTableAction;
import org.onosproject.net.pi.runtime.PiTableEntry;
import org.onosproject.net.pi.runtime.PiTernaryFieldMatch;
import p4.config.v1.P4InfoOuterClass;
import p4.v1.P4RuntimeOuterClass;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * PiTableEntry → P4Runtime {@code TableEntry}, resolving names to the P4Info's numeric ids. Byte strings are
 * in P4Runtime's canonical form (no leading zero bytes), which every P4Runtime 1.x server accepts.
 */
public final class P4RuntimeEncoder {

    private final Map<String, Integer> tableIds = new HashMap<>();
    private final Map<String, Integer> fieldIds = new HashMap<>();      // "table/field"
    private final Map<String, Integer> actionIds = new HashMap<>();
    private final Map<String, Integer> paramIds = new HashMap<>();      // "action/param"

    public P4RuntimeEncoder(P4InfoOuterClass.P4Info p4info) {
        for (P4InfoOuterClass.Table t : p4info.getTablesList()) {
            tableIds.put(t.getPreamble().getName(), t.getPreamble().getId());
            for (P4InfoOuterClass.MatchField f : t.getMatchFieldsList()) {
                fieldIds.put(t.getPreamble().getName() + "/" + f.getName(), f.getId());
            }
        }
        for (P4InfoOuterClass.Action a : p4info.getActionsList()) {
            actionIds.put(a.getPreamble().getName(), a.getPreamble().getId());
            for (P4InfoOuterClass.Action.Param p : a.getParamsList()) {
                paramIds.put(a.getPreamble().getName() + "/" + p.getName(), p.getId());
            }
        }
    }

    /** Reads a P4Info in protobuf text format (p4info.txt). */
    public static P4InfoOuterClass.P4Info parseP4Info(InputStream text) throws IOException {
        P4InfoOuterClass.P4Info.Builder b = P4InfoOuterClass.P4Info.newBuilder();
        TextFormat.getParser().merge(new InputStreamReader(text, StandardCharsets.UTF_8), b);
        return b.build();
    }

    /** The tagging pipeline's P4Info, from the bundle. */
    public static P4InfoOuterClass.P4Info taggerP4Info() {
        try (InputStream in = P4RuntimeEncoder.class.getResourceAsStream(MetronTaggerPipeconf.P4INFO)) {
            if (in == null) {
                throw new IllegalStateException(MetronTaggerPipeconf.P4INFO + " is not on the classpath");
            }
            return parseP4Info(in);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + MetronTaggerPipeconf.P4INFO + ": " + e.getMessage(), e);
        }
    }

    /** @throws IllegalArgumentException naming the table, field, action or parameter the P4Info lacks */
    public P4RuntimeOuterClass.TableEntry encode(PiTableEntry entry) {
        String table = entry.table().id();
        P4RuntimeOuterClass.TableEntry.Builder b = P4RuntimeOuterClass.TableEntry.newBuilder()
                .setTableId(id(tableIds, table, "table"))
                .setControllerMetadata(entry.cookie());
        entry.priority().ifPresent(b::setPriority);
        for (PiFieldMatch m : entry.matchKey().fieldMatches()) {
            b.addMatch(fieldMatch(table, m));
        }
        if (entry.action() != null) {
            b.setAction(P4RuntimeOuterClass.TableAction.newBuilder().setAction(action(entry.action())));
        }
        return b.build();
    }

    private P4RuntimeOuterClass.FieldMatch fieldMatch(String table, PiFieldMatch m) {
        P4RuntimeOuterClass.FieldMatch.Builder f = P4RuntimeOuterClass.FieldMatch.newBuilder()
                .setFieldId(id(fieldIds, table + "/" + m.fieldId().id(), "match field"));
        switch (m.type()) {
            case EXACT:
                f.setExact(P4RuntimeOuterClass.FieldMatch.Exact.newBuilder()
                                   .setValue(canonical(((PiExactFieldMatch) m).value())));
                break;
            case TERNARY:
                PiTernaryFieldMatch t = (PiTernaryFieldMatch) m;
                f.setTernary(P4RuntimeOuterClass.FieldMatch.Ternary.newBuilder()
                                     .setValue(canonical(t.value())).setMask(canonical(t.mask())));
                break;
            case RANGE:
                PiRangeFieldMatch r = (PiRangeFieldMatch) m;
                f.setRange(P4RuntimeOuterClass.FieldMatch.Range.newBuilder()
                                   .setLow(canonical(r.lowValue())).setHigh(canonical(r.highValue())));
                break;
            default:
                throw new IllegalArgumentException("table " + table + ": match kind " + m.type()
                                                           + " of " + m.fieldId() + " is not encoded");
        }
        return f.build();
    }

    private P4RuntimeOuterClass.Action action(PiTableAction a) {
        if (a.type() != PiTableAction.Type.ACTION) {
            throw new IllegalArgumentException("only direct actions are encoded, got " + a.type());
        }
        PiAction action = (PiAction) a;
        String name = action.id().id();
        P4RuntimeOuterClass.Action.Builder b = P4RuntimeOuterClass.Action.newBuilder()
                .setActionId(id(actionIds, name, "action"));
        for (PiActionParam p : action.parameters()) {
            b.addParams(P4RuntimeOuterClass.Action.Param.newBuilder()
                                .setParamId(id(paramIds, name + "/" + p.id().id(), "action parameter"))
                                .setValue(canonical(p.value())));
        }
        return b.build();
    }

    private static int id(Map<String, Integer> ids, String name, String what) {
        Integer id = ids.get(name);
        if (id == null) {
            throw new IllegalArgumentException("P4Info has no " + what + " " + name);
        }
        return id;
    }

    /** Big-endian without leading zero bytes; zero is one 0x00 byte. */
    static ByteString canonical(ImmutableByteSequence v) {
        byte[] a = v.asArray();
        int i = 0;
        while (i < a.length - 1 && a[i] == 0) {
            i++;
        }
        return ByteString.copyFrom(a, i, a.length - i);
    }
}
