package org.metron.openflow;

import org.onosproject.net.DeviceId;
import org.onosproject.net.PortNumber;
import org.onosproject.net.flow.DefaultFlowEntry;
import org.onosproject.net.flow.DefaultFlowRule;
import org.onosproject.net.flow.DefaultTrafficTreatment;
import org.onosproject.net.flow.FlowEntry;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.TrafficSelector;
import org.onosproject.net.flow.TrafficTreatment;
import org.projectfloodlight.openflow.protocol.OFBucket;
import org.projectfloodlight.openflow.protocol.OFFactory;
import org.projectfloodlight.openflow.protocol.OFFlowMod;
import org.projectfloodlight.openflow.protocol.OFFlowModFlags;
import org.projectfloodlight.openflow.protocol.OFFlowRemoved;
import org.projectfloodlight.openflow.protocol.OFFlowStatsEntry;
import org.projectfloodlight.openflow.protocol.OFGroupAdd;
import org.projectfloodlight.openflow.protocol.OFGroupDelete;
import org.projectfloodlight.openflow.protocol.OFGroupType;
import org.projectfloodlight.openflow.protocol.action.OFAction;
import org.projectfloodlight.openflow.protocol.instruction.OFInstruction;
import org.projectfloodlight.openflow.protocol.instruction.OFInstructionApplyActions;
import org.projectfloodlight.openflow.protocol.match.Match;
import org.projectfloodlight.openflow.types.OFBufferId;
import org.projectfloodlight.openflow.types.OFGroup;
import org.projectfloodlight.openflow.types.OFPort;
import org.projectfloodlight.openflow.types.TableId;
import org.projectfloodlight.openflow.types.U64;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;

/**
 * ONOS flow rules to OpenFlow 1.3 flow mods and back. The rule's id becomes the flow cookie, so entries read
 * back from the switch are matched to the rules Metron installed. Anything this translator cannot express is
 * rejected with a message naming the rule and the criterion or instruction, before anything is sent.
 * <p>
 * This class builds the messages (flow mods, groups) and rebuilds rules from flow entries; the selector and
 * treatment mapping are {@link SelectorTranslator}'s and {@link TreatmentTranslator}'s.
 */
public final class FlowRuleTranslator {
    private final OFFactory of;
    private final SelectorTranslator selectors;
    private final TreatmentTranslator treatments;

    public FlowRuleTranslator(OFFactory factory) {
        this.of = factory;
        this.selectors = new SelectorTranslator(factory);
        this.treatments = new TreatmentTranslator(factory);
    }

    // ---- ONOS -> OpenFlow ---------------------------------------------------------------------------------

    public OFFlowMod add(FlowRule rule) {
        OFFlowMod.Builder b = of.buildFlowAdd().setFlags(EnumSet.of(OFFlowModFlags.SEND_FLOW_REM));
        b.setIdleTimeout(rule.isPermanent() ? 0 : rule.timeout()).setHardTimeout(rule.hardTimeout())
                .setInstructions(instructions(rule)).setBufferId(OFBufferId.NO_BUFFER);
        return common(b, rule).build();
    }

    /**
     * An OpenFlow 1.3 fast-failover group add: each bucket watches its port (OVS takes a bucket whose watched port
     * is live, first in order) and carries its treatment's actions.
     */
    public OFGroupAdd addGroup(int groupId, List<PortNumber> watchPorts, List<TrafficTreatment> bucketTreatments) {
        List<OFBucket> buckets = new ArrayList<>();
        for (int k = 0; k < watchPorts.size(); k++) {
            List<OFAction> actions = new ArrayList<>();
            String where = "group " + groupId + " bucket " + k;
            for (OFInstruction i : treatments.instructions(bucketTreatments.get(k), where)) {
                if (!(i instanceof OFInstructionApplyActions)) {
                    throw new IllegalArgumentException(where + ": only actions fit in a bucket, not " + i);
                }
                actions.addAll(((OFInstructionApplyActions) i).getActions());
            }
            buckets.add(of.buildBucket().setWatchPort(OFPort.of((int) watchPorts.get(k).toLong()))
                    .setWatchGroup(OFGroup.ANY).setActions(actions).build());
        }
        return of.buildGroupAdd().setGroup(OFGroup.of(groupId))
                .setGroupType(OFGroupType.FF).setBuckets(buckets).build();
    }

    /** Deletes one group (and, in the switch, the flows that send to it). */
    public OFGroupDelete deleteGroup(int groupId) {
        return of.buildGroupDelete().setGroup(OFGroup.of(groupId)).setGroupType(OFGroupType.FF).build();
    }

    /** Strict delete: only the entry with exactly this match and priority. */
    public OFFlowMod deleteStrict(FlowRule rule) {
        return common(of.buildFlowDeleteStrict(), rule).setOutPort(OFPort.ANY).setOutGroup(OFGroup.ANY).build();
    }

    /** Deletes every entry of every table (OF1.3 needs table ALL, out_port ANY, out_group ANY). */
    public OFFlowMod deleteAll() {
        return of.buildFlowDelete().setTableId(TableId.ALL).setOutPort(OFPort.ANY).setOutGroup(OFGroup.ANY)
                .setMatch(of.buildMatch().build()).build();
    }

    private OFFlowMod.Builder common(OFFlowMod.Builder b, FlowRule rule) {
        return b.setCookie(U64.of(rule.id().value())).setPriority(rule.priority())
                .setTableId(TableId.of(rule.tableId())).setMatch(match(rule));
    }

    /** The match of a rule's selector. */
    public Match match(FlowRule rule) {
        return selectors.match(rule);
    }

    private List<OFInstruction> instructions(FlowRule rule) {
        return treatments.instructions(rule.treatment(), "rule " + rule.id() + " on " + rule.deviceId());
    }

    // ---- OpenFlow -> ONOS ---------------------------------------------------------------------------------

    /** A group bucket's actions as the treatment they were made from ({@link #addGroup}'s inverse). */
    public TrafficTreatment bucketTreatment(List<OFAction> actions) {
        TrafficTreatment.Builder t = DefaultTrafficTreatment.builder();
        actions.forEach(a -> TreatmentTranslator.action(t, a));
        return t.build();
    }

    /** The rule a flow entry represents, rebuilt from the switch's own view (id = the entry's cookie). */
    public FlowRule toRule(DeviceId device, OFFlowStatsEntry e) {
        return rule(device, e.getCookie(), e.getPriority(), e.getTableId(),
                    SelectorTranslator.selector(e.getMatch()), TreatmentTranslator.treatment(e.getInstructions()),
                    e.getIdleTimeout(), e.getHardTimeout());
    }

    /**
     * The rule a FLOW_REMOVED message names (id = its cookie; the message carries no instructions, so the
     * treatment is empty: enough to find the rule by id).
     */
    public FlowRule toRule(DeviceId device, OFFlowRemoved e) {
        return rule(device, e.getCookie(), e.getPriority(), e.getTableId(),
                    SelectorTranslator.selector(e.getMatch()), DefaultTrafficTreatment.emptyTreatment(),
                    e.getIdleTimeout(), e.getHardTimeout());
    }

    private static FlowRule rule(DeviceId device, U64 cookie, int priority, TableId table, TrafficSelector selector,
                                 TrafficTreatment treatment, int idleTimeout, int hardTimeout) {
        FlowRule.Builder b = DefaultFlowRule.builder().forDevice(device).withCookie(cookie.getValue())
                .withPriority(priority).forTable(table.getValue()).withSelector(selector).withTreatment(treatment)
                .withHardTimeout(hardTimeout);
        if (idleTimeout == 0) {
            b.makePermanent();
        } else {
            b.makeTemporary(idleTimeout);
        }
        return b.build();
    }

    /** A flow entry with the switch's counters, for {@code rule} (the rule as Metron installed it). */
    public static FlowEntry toEntry(FlowRule rule, OFFlowStatsEntry e) {
        return new DefaultFlowEntry(rule, FlowEntry.FlowEntryState.ADDED, e.getDurationSec(),
                                    e.getPacketCount().getValue(), e.getByteCount().getValue());
    }
}
