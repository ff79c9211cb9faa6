package org.metron.app.store;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.metron.app.api.RuleInfo.Role;
import org.onlab.packet.Ip4Address;
import org.onlab.packet.Ip4Prefix;
import org.onlab.packet.IpPrefix;
import org.onlab.packet.MacAddress;
import org.onlab.packet.TpPort;
import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficSelector;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.onosproject.net.flow.criteria.Criteria;
import org.onosproject.net.flow.criteria.Criterion;
import org.onosproject.net.flow.criteria.EthCriterion;
import org.onosproject.net.flow.criteria.EthTypeCriterion;
import org.onosproject.net.flow.criteria.IPCriterion;
import org.onosproject.net.flow.criteria.IPProtocolCriterion;
import org.onosproject.net.flow.criteria.PortCriterion;
import org.onosproject.net.flow.criteria.TcpPortCriterion;
import org.onosproject.net.flow.criteria.UdpPortCriterion;
import org.onosproject.net.flow.instructions.Instruction;
import org.onosproject.net.flow.instructions.Instructions;
import org.onosproject.net.flow.instructions.L2ModificationInstruction;
import org.onosproject.net.flow.instructions.L2ModificationInstruction.ModEtherInstruction;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kryo form of {@link InstalledRule}, for what must keep whole rules: the scaling journal (the rules an operation in
 * flight changes, to roll it back on any instance), precomputed failover backups (rules not installed anywhere yet)
 * and installed states an older version stored (read back, then written as {@link InstalledRecord}s). A chain of
 * FW(4000) has ~42k switch rules, and the generic field serializers spent most of the store time walking each rule's
 * object graph (selector set,
 * criteria, prefixes, addresses, treatment lists). The criteria and instructions Metron's offload, transit and
 * return rules consist of are written as plain numbers; any other criterion or instruction is written by
 * Kryo's generic path inside the same record, and a rule whose treatment uses more than immediate
 * instructions is written whole by the generic path. Decoding gives an {@code exactMatch}-equal rule with the
 * same flow id (set as the rule's cookie, so no id is recomputed).
 */
final class InstalledRuleSerializer extends Serializer<InstalledRule> {
    private static final byte COMPACT = 0;
    private static final byte GENERIC = 1;

    private static final byte C_OTHER = 0;
    private static final byte C_IN_PORT = 1;
    private static final byte C_ETH_TYPE = 2;
    private static final byte C_IP_PROTO = 3;
    private static final byte C_IPV4 = 4;
    private static final byte C_L4_PORT = 5;
    private static final byte C_ETH = 6;

    private static final byte I_OTHER = 0;
    private static final byte I_OUTPUT = 1;
    private static final byte I_ETH = 2;
    private static final byte I_DROP = 3;

    private static final Role[] ROLES = Role.values();
    private static final Criterion.Type[] CRITERIA = Criterion.Type.values();
    private static final FlowRule.FlowRemoveReason[] REASONS = FlowRule.FlowRemoveReason.values();

    /** Device ids seen, by text (bounded by the network's size; shared by Kryo's pooled instances). */
    private final Map<String, DeviceId> devices = new ConcurrentHashMap<>();

    InstalledRuleSerializer() {
        super(false, true); // no nulls inside; immutable
    }

    @Override
    public void write(Kryo kryo, Output out, InstalledRule r) {
        FlowRule rule = r.rule();
        boolean compact = rule instanceof DefaultFlowRule && immediateOnly(rule.treatment());
        out.writeByte(compact ? COMPACT : GENERIC);
        out.writeVarInt(r.role().ordinal(), true);
        if (!compact) {
            kryo.writeClassAndObject(out, rule);
            return;
        }
        out.writeString(rule.deviceId().toString());
        out.writeVarInt(rule.tableId(), true);
        out.writeVarInt(rule.priority(), true);
        out.writeLong(rule.id().value());
        out.writeBoolean(rule.isPermanent());
        out.writeVarInt(rule.timeout(), true);
        out.writeVarInt(rule.hardTimeout(), true);
        out.writeVarInt(rule.reason().ordinal(), true);
        out.writeVarInt(rule.selector().criteria().size(), true);
        for (Criterion c : rule.selector().criteria()) {
            writeCriterion(kryo, out, c);
        }
        out.writeVarInt(rule.treatment().immediate().size(), true);
        for (Instruction i : rule.treatment().immediate()) {
            writeInstruction(kryo, out, i);
        }
    }

    @Override
    public InstalledRule read(Kryo kryo, Input in, Class<InstalledRule> type) {
        byte form = in.readByte();
        Role role = ROLES[in.readVarInt(true)];
        if (form == GENERIC) {
            return new InstalledRule(role, (FlowRule) kryo.readClassAndObject(in));
        }
        FlowRule.Builder b = DefaultFlowRule.builder().forDevice(device(in.readString()))
                .forTable(in.readVarInt(true)).withPriority(in.readVarInt(true)).withCookie(in.readLong());
        boolean permanent = in.readBoolean();
        int timeout = in.readVarInt(true);
        b.withHardTimeout(in.readVarInt(true)).withReason(REASONS[in.readVarInt(true)]);
        if (permanent) {
            b.makePermanent();
        } else {
            b.makeTemporary(timeout);
        }
        TrafficSelector.Builder sel = DefaultTrafficSelector.builder();
        for (int n = in.readVarInt(true); n > 0; n--) {
            sel.add(readCriterion(kryo, in));
        }
        TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
        for (int n = in.readVarInt(true); n > 0; n--) {
            t.add(readInstruction(kryo, in));
        }
        return new InstalledRule(role, b.withSelector(sel.build()).withTreatment(t.build()).build());
    }

    /** Parsing a device id parses a URI: a chain's rules name a handful of devices, parse each once. */
    private DeviceId device(String id) {
        return devices.computeIfAbsent(id, DeviceId::deviceId);
    }

    /** Whether the treatment is a plain list of immediate instructions (all Metron's rules are). */
    private static boolean immediateOnly(TrafficTreatment t) {
        return t instanceof DefaultTrafficTreatment && t.deferred().isEmpty() && t.tableTransition() == null
                && !t.clearedDeferred() && t.writeMetadata() == null && t.statTrigger() == null
                && t.meters().isEmpty();
    }

    private static void writeCriterion(Kryo kryo, Output out, Criterion c) {
        switch (c.type()) {
            case IN_PORT: {
                PortNumber p = ((PortCriterion) c).port();
                if (p.hasName()) {
                    break;
                }
                out.writeByte(C_IN_PORT);
                out.writeLong(p.toLong());
                return;
            }
            case ETH_TYPE:
                out.writeByte(C_ETH_TYPE);
                out.writeShort(((EthTypeCriterion) c).ethType().toShort());
                return;
            case IP_PROTO:
                out.writeByte(C_IP_PROTO);
                out.writeShort(((IPProtocolCriterion) c).protocol());
                return;
            case IPV4_SRC:
            case IPV4_DST: {
                IpPrefix p = ((IPCriterion) c).ip();
                if (!p.isIp4()) {
                    break;
                }
                out.writeByte(C_IPV4);
                out.writeBoolean(c.type() == Criterion.Type.IPV4_SRC);
                out.writeInt(p.address().getIp4Address().toInt());
                out.writeByte(p.prefixLength());
                return;
            }
            case TCP_SRC:
            case TCP_SRC_MASKED:
            case TCP_DST:
            case TCP_DST_MASKED: {
                TcpPortCriterion t = (TcpPortCriterion) c;
                writePort(out, c.type(), t.tcpPort(), t.mask());
                return;
            }
            case UDP_SRC:
            case UDP_SRC_MASKED:
            case UDP_DST:
            case UDP_DST_MASKED: {
                UdpPortCriterion u = (UdpPortCriterion) c;
                writePort(out, c.type(), u.udpPort(), u.mask());
                return;
            }
            case ETH_SRC:
            case ETH_SRC_MASKED:
            case ETH_DST:
            case ETH_DST_MASKED: {
                EthCriterion e = (EthCriterion) c;
                out.writeByte(C_ETH);
                out.writeVarInt(c.type().ordinal(), true);
                out.writeLong(e.mac().toLong());
                out.writeBoolean(e.mask() != null);
                if (e.mask() != null) {
                    out.writeLong(e.mask().toLong());
                }
                return;
            }
            default:
                break;
        }
        out.writeByte(C_OTHER);
        kryo.writeClassAndObject(out, c);
    }

    private static void writePort(Output out, Criterion.Type type, TpPort port, TpPort mask) {
        out.writeByte(C_L4_PORT);
        out.writeVarInt(type.ordinal(), true);
        out.writeVarInt(port.toInt(), true);
        out.writeVarInt(mask == null ? -1 : mask.toInt(), false);
    }

    private static Criterion readCriterion(Kryo kryo, Input in) {
        byte code = in.readByte();
        switch (code) {
            case C_IN_PORT:
                return Criteria.matchInPort(PortNumber.portNumber(in.readLong()));
            case C_ETH_TYPE:
                return Criteria.matchEthType(in.readShort());
            case C_IP_PROTO:
                return Criteria.matchIPProtocol(in.readShort());
            case C_IPV4: {
                boolean src = in.readBoolean();
                Ip4Prefix p = Ip4Prefix.valueOf(Ip4Address.valueOf(in.readInt()), in.readByte());
                return src ? Criteria.matchIPSrc(p) : Criteria.matchIPDst(p);
            }
            case C_L4_PORT: {
                Criterion.Type type = CRITERIA[in.readVarInt(true)];
                TpPort port = TpPort.tpPort(in.readVarInt(true));
                int m = in.readVarInt(false);
                TpPort mask = m < 0 ? null : TpPort.tpPort(m);
                return l4(type, port, mask);
            }
            case C_ETH: {
                Criterion.Type type = CRITERIA[in.readVarInt(true)];
                MacAddress mac = MacAddress.valueOf(in.readLong());
                MacAddress mask = in.readBoolean() ? MacAddress.valueOf(in.readLong()) : null;
                switch (type) {
                    case ETH_SRC:
                        return Criteria.matchEthSrc(mac);
                    case ETH_SRC_MASKED:
                        return Criteria.matchEthSrcMasked(mac, mask);
                    case ETH_DST:
                        return Criteria.matchEthDst(mac);
                    default:
                        return Criteria.matchEthDstMasked(mac, mask);
                }
            }
            case C_OTHER:
                return (Criterion) kryo.readClassAndObject(in);
            default:
                throw new IllegalStateException("stored switch rule has unknown criterion code " + code);
        }
    }

    private static Criterion l4(Criterion.Type type, TpPort port, TpPort mask) {
        switch (type) {
            case TCP_SRC:
                return Criteria.matchTcpSrc(port);
            case TCP_SRC_MASKED:
                return Criteria.matchTcpSrcMasked(port, mask);
            case TCP_DST:
                return Criteria.matchTcpDst(port);
            case TCP_DST_MASKED:
                return Criteria.matchTcpDstMasked(port, mask);
            case UDP_SRC:
                return Criteria.matchUdpSrc(port);
            case UDP_SRC_MASKED:
                return Criteria.matchUdpSrcMasked(port, mask);
            case UDP_DST:
                return Criteria.matchUdpDst(port);
            case UDP_DST_MASKED:
                return Criteria.matchUdpDstMasked(port, mask);
            default:
                throw new IllegalStateException("stored switch rule has L4 criterion of type " + type);
        }
    }

    private static void writeInstruction(Kryo kryo, Output out, Instruction i) {
        if (i.type() == Instruction.Type.OUTPUT && !((Instructions.OutputInstruction) i).port().hasName()) {
            out.writeByte(I_OUTPUT);
            out.writeLong(((Instructions.OutputInstruction) i).port().toLong());
        } else if (i instanceof ModEtherInstruction) {
            out.writeByte(I_ETH);
            out.writeBoolean(((ModEtherInstruction) i).subtype() == L2ModificationInstruction.L2SubType.ETH_SRC);
            out.writeLong(((ModEtherInstruction) i).mac().toLong());
        } else if (i.type() == Instruction.Type.NOACTION) {
            out.writeByte(I_DROP);
        } else {
            out.writeByte(I_OTHER);
            kryo.writeClassAndObject(out, i);
        }
    }

    private static Instruction readInstruction(Kryo kryo, Input in) {
        byte code = in.readByte();
        switch (code) {
            case I_OUTPUT:
                return Instructions.createOutput(PortNumber.portNumber(in.readLong()));
            case I_ETH: {
                boolean src = in.readBoolean();
                MacAddress mac = MacAddress.valueOf(in.readLong());
                return src ? Instructions.modL2Src(mac) : Instructions.modL2Dst(mac);
            }
            case I_DROP:
                return Instructions.createNoAction();
            case I_OTHER:
                return (Instruction) kryo.readClassAndObject(in);
            default:
                throw new IllegalStateException("stored switch rule has unknown instruction code " + code);
        }
    }
}
