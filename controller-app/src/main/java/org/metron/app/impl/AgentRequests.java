package org.metron.app.impl;

import com.google.common.hash.Hashing;
import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.Egress;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.NicAction;
import org.metron.agent.v1.NicMatch;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.UpdatePipelineRequest;
import org.metron.app.api.ChainId;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;
import org.metron.synth.TagType;
import org.onlab.packet.MacAddress;
import org.onosproject.net.DeviceId;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * What a chain asks of its servers' agents, built from its placement: the pipeline request (egress list and
 * the Click config, tag, core and classes of each placed group) and the NIC rules steering each group's tag to
 * its core's queue. Kept apart from {@link RulePlanner}, which plans the switch rules: these requests go to the
 * agent over gRPC, not to ONOS, and the scaling operations build them for a remote server without a switch plan.
 * Pure: touches no device.
 */
public final class AgentRequests {

    /** Separates a placed group's compiled group from the chain version that placed it ("g0~v3"). */
    public static final char VERSION_MARK = '~';

    private AgentRequests() {
    }

    /** The NIC rule of every placed group (split ones too): its tag to its core's queue. */
    public static List<NicRule> nicRules(ChainId chain, Placement p) {
        List<NicRule> out = new ArrayList<>();
        for (GroupAssignment ga : p.localGroups()) {
            NicMatch.Builder m = NicMatch.newBuilder();
            if (ga.tag().type() == TagType.VLAN) {
                m.setVlan(ga.tag().group());
            } else {
                m.setEthDst(text(ga.tag().groupMac())).setEthDstMask(text(Tag.GROUP_MASK));
            }
            out.add(NicRule.newBuilder().setId(nicRuleId(chain, ga.groupId())).setNic(p.nic()).setPriority(0)
                    .setMatch(m).setAction(NicAction.newBuilder().setQueue(ga.core())).build());
        }
        return out;
    }

    /**
     * The pipeline the groups a chain scaled out to {@code server} run there (named after the chain, as on its own
     * server): the chain's egress list through their egress NIC, those groups of {@code p}.
     *
     * @throws MetronException INTERNAL when {@code p} places no group on {@code server}
     */
    public static DeployPipelineRequest remotePipeline(ChainId chain, Placement p, DeviceId server,
                                                       CompiledChain compiled, Tag marker) {
        List<GroupAssignment> there = p.groups().stream().filter(g -> g.server().equals(Optional.of(server)))
                .collect(Collectors.toList());
        if (there.isEmpty()) {
            throw new MetronException(Fault.INTERNAL, "chain " + chain + " has no group on " + server);
        }
        Placement alone = new Placement(chain, Optional.of(server), there.get(0).nic(), there.get(0).egressNic(),
                Optional.empty(), "", there.stream().map(GroupAssignment::onItsServer).collect(Collectors.toList()));
        return pipeline(chain, alone, compiled, marker);
    }

    /**
     * The same group set as an update of the running pipeline: groups whose spec is unchanged keep running with
     * their flows, new ones start empty, absent ones are retired; the pipeline keeps its egress.
     */
    public static UpdatePipelineRequest asUpdate(DeployPipelineRequest req) {
        return UpdatePipelineRequest.newBuilder().setPipelineId(req.getPipelineId()).addAllGroups(req.getGroupsList())
                .build();
    }

    /**
     * The NIC rule of a group scaled out to another server (its tag to its core's queue on that server's NIC),
     * with the id {@link #nicRuleId} gives it; installed there when that NIC has a rule table.
     */
    public static NicRule remoteNicRule(ChainId chain, GroupAssignment ga) {
        return nicRules(chain, new Placement(chain, ga.server(), ga.nic(), ga.egressNic(), Optional.empty(), "",
                List.of(ga.onItsServer()))).get(0);
    }

    /** MAC text as agent.proto writes it (lower case; ONOS prints upper case). */
    private static String text(MacAddress mac) {
        return mac.toString().toLowerCase(Locale.ROOT);
    }

    /** Stable 64-bit id of a group's NIC rule: the same chain and group always get the same id. */
    public static long nicRuleId(ChainId chain, String groupId) {
        return Hashing.murmur3_128().hashString(chain.name() + "/" + groupId, StandardCharsets.UTF_8).asLong();
    }

    /**
     * The compiled group a placed group runs: "g3", the groups scaling split from it ("g3.1", "g3.2", ...) and
     * those of a later version of the chain ("g3~v2", "g3~v2.1", docs/updates.md) all run compiled group 3
     * (docs/scaling.md#split).
     *
     * @throws MetronException naming the group when it comes from no compiled group
     */
    public static ClassGroup compiledGroup(CompiledChain compiled, String placedGroupId) {
        int end = placedGroupId.length();
        for (char c : new char[] {'.', VERSION_MARK}) {
            int at = placedGroupId.indexOf(c);
            end = at < 0 ? end : Math.min(end, at);
        }
        String base = placedGroupId.substring(0, end);
        return compiled.groups().stream().filter(g -> ChainBringUp.groupId(g).equals(base)).findFirst()
                .orElseThrow(() -> new MetronException(Fault.INTERNAL, "group " + placedGroupId
                        + " comes from no compiled group (compiled: " + compiled.groups().stream()
                        .map(ChainBringUp::groupId).collect(Collectors.toList()) + ")"));
    }

    static DeployPipelineRequest pipeline(ChainId chain, Placement p, CompiledChain compiled, Tag marker) {
        DeployPipelineRequest.Builder req = DeployPipelineRequest.newBuilder().setPipelineId(chain.name())
                .setIngressNic(p.nic());
        ReplyTraffic replies = ReplyTraffic.of(compiled);
        for (int k = 0; k < compiled.egress().size(); k++) {
            // replies leave through the NIC facing the ingress point, where the reply return path starts
            boolean reply = replies.isReplyEgress(k);
            Egress.Builder e = Egress.newBuilder().setNic(reply ? p.nic() : p.egressNic());
            e.setDstMac(text(reply ? marker.replyEgressMac() : marker.egressMac()));
            if (marker.type() == TagType.VLAN) {
                e.setVlan(marker.group());
            }
            req.addEgress(e);
        }
        for (GroupAssignment ga : p.localGroups()) {
            req.addGroups(groupSpec(compiledGroup(compiled, ga.groupId()), ga));
        }
        return req.build();
    }

    /**
     * The agent's spec of a placed group: its compiled group's Click config, tag, core, classes and the slices of
     * classes it holds only part of (docs/scaling.md#class-split), its port share (docs/scaling.md#port-shares).
     */
    public static GroupSpec.Builder groupSpec(ClassGroup cg, GroupAssignment ga) {
        GroupSpec.Builder g = GroupSpec.newBuilder().setGroupId(ga.groupId()).setClickConfig(cg.clickConfig())
                .setTag(org.metron.agent.v1.Tag.newBuilder().setType(ga.tag().type() == TagType.MAC
                        ? org.metron.agent.v1.TagType.TAG_MAC : org.metron.agent.v1.TagType.TAG_VLAN)
                        .setValue(ga.tag().group()))
                .setCore(ga.core()).addAllClassIds(ga.classIds());
        ga.slices().forEach((cls, s) -> g.addSlices(org.metron.agent.v1.ClassSlice.newBuilder().setClassId(cls)
                .setSport(portBits(s))));
        if (ga.portShare() != GroupAssignment.NO_PORT_SHARE) {
            g.setPortShare(org.metron.agent.v1.PortShare.newBuilder().setIndex(ga.portShare())
                    .setCount(GroupAssignment.PORT_SHARES));
        }
        return g;
    }

    /** A slice's bits as the agent takes them. */
    public static org.metron.agent.v1.PortBits portBits(org.metron.app.api.ClassSlice s) {
        return org.metron.agent.v1.PortBits.newBuilder().setMask(s.mask()).setValue(s.value()).build();
    }

}
