package org.metron.drivers.p4;

import org.onlab.util.ImmutableByteSequence;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthTypeCriterion;
import org.onosproject.net.flow.criteria.IPCriterion;
import org.onosproject.net.flow.criteria.IPProtocolCriterion;
import org.onosproject.net.flow.criteria.PiCriterion;
import org.onosproject.net.flow.criteria.PortCriterion;
import org.onosproject.net.flow.criteria.TcpPortCriterion;
import org.onosproject.net.flow.criteria.UdpPortCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.PiInstruction;
import org.onosproject.net.pi.model.PiMatchFieldId;
import org.onosproject.net.pi.model.PiMatchFieldModel;
import org.onosproject.net.pi.model.PiMatchType;
import org.onosproject.net.pi.model.PiPipelineInterpreter;
import org.onosproject.net.pi.model.PiPipelineInterpreter.PiInterpreterException;
import org.onosproject.net.pi.model.PiPipelineModel;
import org.onosproject.net.pi.model.PiTableId;
import org.onosproject.net.pi.model.PiTableModel;
import org.onosproject.net.pi.runtime.PiExactFieldMatch;
import org.onosproject.net.pi.runtime.PiFieldMatch;
import org.onosproject.net.pi.runtime.PiMatchKey;
import org.onosproject.net.pi.runtime.PiRangeFieldMatch;
import org.onosproject.net.pi.runtime.PiTableAction;
import org.onosproject.net.pi.runtime.PiTableEntry;
import org.onosproject.net.pi.runtime.PiTernaryFieldMatch;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * FlowRule → PiTableEntry through a pipeline model and its interpreter: what ONOS core's flow rule translator
 * does on a controller (core is not on Maven Central, so Metron hosts without ONOS use this one).
 * Criterion values become the match kind the model declares: exact, ternary, or range (a TCP/UDP port, or a
 * port masked by a prefix mask, becomes [low, high]).
 */
public final class PiTableEntryTranslator {

    private PiTableEntryTranslator() {
    }

    public static PiTableEntry translate(FlowRule rule, PiPipelineModel model, PiPipelineInterpreter interpreter)
            throws PiInterpreterException {
        String where = "flow rule " + Long.toHexString(rule.id().value());
        PiTableId tableId = interpreter.mapFlowRuleTableId(rule.tableId()).orElseThrow(() ->
                new PiInterpreterException(where + ": the pipeline has no table for FlowRule table " + rule.tableId()));
        PiTableModel table = model.table(tableId).orElseThrow(() ->
                new PiInterpreterException(where + ": table " + tableId + " is not in the pipeline model"));

        Map<PiMatchFieldId, PiFieldMatch> matches = new LinkedHashMap<>();
        for (Criterion c : rule.selector().criteria()) {
            if (c instanceof PiCriterion) {
                for (PiFieldMatch m : ((PiCriterion) c).fieldMatches()) {
                    field(where, table, m.fieldId());
                    put(where, matches, m);
                }
                continue;
            }
            PiMatchFieldId id = interpreter.mapCriterionType(c.type()).orElseThrow(() ->
                    new PiInterpreterException(where + ": the pipeline cannot match " + c.type()));
            put(where, matches, fieldMatch(where, field(where, table, id), c));
        }

        boolean needsPriority = table.matchFields().stream()
                .anyMatch(f -> f.matchType() == PiMatchType.TERNARY || f.matchType() == PiMatchType.RANGE);
        if (needsPriority && rule.priority() <= 0) {
            throw new PiInterpreterException(where + ": table " + tableId
                                                     + " has ternary/range keys, P4Runtime needs a priority > 0");
        }
        PiTableEntry.Builder entry = PiTableEntry.builder()
                .forTable(tableId)
                .withMatchKey(PiMatchKey.builder().addFieldMatches(matches.values()).build())
                .withAction(action(rule, tableId, interpreter))
                .withCookie(rule.id().value());
        if (needsPriority) {
            entry.withPriority(rule.priority());
        }
        return entry.build();
    }

    private static PiTableAction action(FlowRule rule, PiTableId table, PiPipelineInterpreter interpreter)
            throws PiInterpreterException {
        for (Instruction i : rule.treatment().allInstructions()) {
            if (i instanceof PiInstruction) {
                // an app that speaks the pipeline's own actions
                return ((PiInstruction) i).action();
            }
        }
        return interpreter.mapTreatment(rule.treatment(), table);
    }

    private static PiMatchFieldModel field(String where, PiTableModel table, PiMatchFieldId id)
            throws PiInterpreterException {
        return table.matchField(id).orElseThrow(() -> new PiInterpreterException(
                where + ": table " + table.id() + " has no match field " + id));
    }

    private static void put(String where, Map<PiMatchFieldId, PiFieldMatch> matches, PiFieldMatch m)
            throws PiInterpreterException {
        if (matches.put(m.fieldId(), m) != null) {
            throw new PiInterpreterException(where + ": " + m.fieldId() + " is matched twice");
        }
    }

    /** A criterion as value/mask over the field's width, then in the field's match kind. */
    private static PiFieldMatch fieldMatch(String where, PiMatchFieldModel field, Criterion c)
            throws PiInterpreterException {
        int width = field.bitWidth();
        BigInteger all = BigInteger.ONE.shiftLeft(width).subtract(BigInteger.ONE);
        BigInteger value;
        BigInteger mask = all;
        switch (c.type()) {
            case IN_PORT:
                value = BigInteger.valueOf(((PortCriterion) c).port().toLong());
                break;
            case ETH_TYPE:
                value = BigInteger.valueOf(((EthTypeCriterion) c).ethType().toShort() & 0xffff);
                break;
            case IP_PROTO:
                value = BigInteger.valueOf(((IPProtocolCriterion) c).protocol());
                break;
            case IPV4_SRC:
            case IPV4_DST:
            case IPV6_SRC:
            case IPV6_DST:
                IPCriterion ip = (IPCriterion) c;
                value = new BigInteger(1, ip.ip().address().toOctets());
                int hostBits = width - ip.ip().prefixLength();
                mask = all.shiftRight(hostBits).shiftLeft(hostBits);
                break;
            case TCP_SRC:
            case TCP_DST:
            case TCP_SRC_MASKED:
            case TCP_DST_MASKED:
                TcpPortCriterion tcp = (TcpPortCriterion) c;
                value = BigInteger.valueOf(tcp.tcpPort().toInt());
                mask = tcp.mask() == null ? all : BigInteger.valueOf(tcp.mask().toInt());
                break;
            case UDP_SRC:
            case UDP_DST:
            case UDP_SRC_MASKED:
            case UDP_DST_MASKED:
                UdpPortCriterion udp = (UdpPortCriterion) c;
                value = BigInteger.valueOf(udp.udpPort().toInt());
                mask = udp.mask() == null ? all : BigInteger.valueOf(udp.mask().toInt());
                break;
            default:
                throw new PiInterpreterException(where + ": cannot translate " + c.type() + " to a table key");
        }
        if (value.bitLength() > width || mask.bitLength() > width) {
            throw new PiInterpreterException(where + ": " + c + " does not fit " + field.id() + " (" + width
                                                     + " bits)");
        }
        value = value.and(mask);
        switch (field.matchType()) {
            case EXACT:
                if (!mask.equals(all)) {
                    throw new PiInterpreterException(where + ": " + field.id() + " is exact, cannot match " + c);
                }
                return new PiExactFieldMatch(field.id(), bytes(value, width));
            case TERNARY:
                return new PiTernaryFieldMatch(field.id(), bytes(value, width), bytes(mask, width));
            case RANGE:
                BigInteger hostMask = all.xor(mask);
                if (hostMask.add(BigInteger.ONE).and(hostMask).signum() != 0) {
                    throw new PiInterpreterException(where + ": " + field.id() + " is a range, mask of " + c
                                                             + " is not a prefix mask");
                }
                return new PiRangeFieldMatch(field.id(), bytes(value, width), bytes(value.or(hostMask), width));
            default:
                throw new PiInterpreterException(where + ": " + field.id() + " has match kind "
                                                         + field.matchType() + ", unsupported");
        }
    }

    /** Big-endian, exactly ceil(width/8) bytes. */
    static ImmutableByteSequence bytes(BigInteger v, int width) {
        byte[] raw = v.toByteArray();
        byte[] out = new byte[(width + 7) / 8];
        int n = Math.min(raw.length, out.length);
        System.arraycopy(raw, raw.length - n, out, out.length - n, n);
        return ImmutableByteSequence.copyFrom(out);
    }
}
