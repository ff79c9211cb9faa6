package org.metron.app.rest;


import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.agent.v1.BlackBoxStats;
import org.metron.agent.v1.NicCapabilities;
import org.metron.app.api.Chain;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.onosproject.net.DeviceId;
import org.metron.drivers.provider.ServerConfigErrors;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TrafficClassInfo;
import org.metron.app.api.ValidationReport;
import org.metron.app.scaling.BlackBoxStatus;
import org.metron.drivers.server.NicDispatch;
import org.onosproject.net.flow.FlowRule;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Locale;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * The JSON form of every Metron value the REST API, the GUI and the CLI's --json output show. One place, so
 * the three never disagree on field names.
 */
public final class MetronJson {
    public static final ObjectMapper MAPPER = new ObjectMapper();

    private MetronJson() {
    }

    public static ObjectNode chain(Chain c, boolean withDefinition) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("name", c.id().name());
        n.put("state", c.state().name());
        n.put("reason", c.reason());
        ArrayNode pending = n.putArray("pending");
        c.pending().forEach(p -> pending.addObject().put("device", p.device().toString()).put("what", p.what())
                .put("why", p.why()));
        n.put("version", c.version());
        c.update().ifPresent(u -> {
            ObjectNode un = n.putObject("update");
            un.put("state", u.pending() ? "PENDING" : "REFUSED");
            u.refusal().ifPresent(f -> un.put("error", f.name()).put("message", u.message()));
        });
        n.put("tagType", c.deployment().tagType().name().toLowerCase());
        n.put("cpuCores", c.deployment().cpuCores());
        n.put("ingressPoint", ingress(c.deployment()).toString());
        n.put("egressPoint", egress(c.deployment()).toString());
        if (withDefinition) {
            try {
                n.set("definition", MAPPER.readTree(c.json()));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return n;
    }

    /** What a drain or undrain did (docs/failover.md#planned-restart-drain). */
    public static ObjectNode drain(org.metron.app.api.DrainReport r) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("server", r.server().toString());
        n.put("drained", r.drained());
        ArrayNode moves = n.putArray("moves");
        for (org.metron.app.api.DrainReport.Move m : r.moves()) {
            moves.addObject().put("chain", m.chain().name()).put("what", m.what()).put("from", m.from().toString())
                    .put("to", m.to().toString()).put("detail", m.detail());
        }
        return n;
    }

    /**
     * The servers a chain's placement uses (its own, then those its groups were scaled out to), each saying
     * whether it is drained: a chain on a drained server is one its drain could not move.
     */
    public static ArrayNode servers(Placement p, java.util.Set<DeviceId> drained) {
        ArrayNode a = MAPPER.createArrayNode();
        java.util.Set<DeviceId> used = new java.util.LinkedHashSet<>();
        p.server().ifPresent(used::add);
        p.groups().forEach(g -> g.server().ifPresent(used::add));
        used.forEach(s -> a.addObject().put("id", s.toString()).put("drained", drained.contains(s)));
        return a;
    }

    /** A black-box NF's status (docs/blackbox.md; the document's BlackBox). */
    public static ObjectNode blackBox(BlackBoxStatus b) {
        BlackBoxStats s = b.stats();
        ObjectNode n = MAPPER.createObjectNode();
        n.put("nf", s.getNf()).put("group", b.group()).put("server", b.server().toString())
                .put("element", s.getElement()).put("mode", s.getMode()).put("state", s.getState())
                .put("onFailure", s.getOnFailure()).put("pid", s.getPid()).put("restarts", s.getRestarts())
                .put("sent", s.getSent()).put("returned", s.getReturned()).put("nfDropped", s.getNfDropped())
                .put("ringFull", s.getRingFull()).put("bypassed", s.getBypassed())
                .put("failedClosed", s.getFailedClosed()).put("nfLost", s.getNfLost()).put("nfSleeps", s.getNfSleeps())
                .put("nfWakeups", s.getNfWakeups()).put("link", s.getLink()).put("lastExit", s.getLastExit());
        return n;
    }

    public static ObjectNode tag(Tag t) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("type", t.type().name().toLowerCase());
        n.put("group", t.group());
        n.put("mac", t.groupMac().toString().toLowerCase());
        return n;
    }

    public static ObjectNode placement(Placement p) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("chain", p.chainId().name());
        n.put("server", MetronText.or(p.server(), ""));
        n.put("nic", p.nic());
        n.put("egressNic", p.egressNic());
        n.put("offloadDevice", MetronText.or(p.offloadDevice(), ""));
        n.put("offloadProfile", p.offloadProfile());
        ArrayNode groups = n.putArray("groups");
        for (GroupAssignment g : p.groups()) {
            ObjectNode gn = groups.addObject();
            gn.put("id", g.groupId());
            gn.set("tag", tag(g.tag()));
            gn.put("core", g.core());
            // where it runs: the chain's server, or another one a scale-out placed it on (docs/scaling.md#scale-out)
            gn.put("server", MetronText.server(p, g));
            gn.put("remote", g.remote());
            if (g.remote()) {
                gn.put("nic", g.nic());
                gn.put("egressNic", g.egressNic());
            }
            if (g.portShare() != GroupAssignment.NO_PORT_SHARE) {
                // the part of the NAPT port ranges it maps new flows to (docs/scaling.md#port-shares)
                gn.put("portShare", g.portShare());
            }
            ArrayNode classes = gn.putArray("classes");
            g.classIds().forEach(classes::add);
            if (!g.slices().isEmpty()) {
                // the classes it holds only part of: the source-port bits of its part (docs/scaling.md#class-split)
                ObjectNode slices = gn.putObject("slices");
                g.slices().forEach((cls, sl) -> slices.putObject(Integer.toString(cls)).put("sportMask", sl.mask())
                        .put("sportValue", sl.value()).put("text", sl.toString()));
            }
        }
        return n;
    }

    /**
     * A traffic class: its entries in first-match order, each with where it is classified, what the chain does
     * with its packets ({@link MetronText#does}) and the switch rules it became.
     */
    public static ObjectNode trafficClass(TrafficClassInfo tc) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("chain", tc.chainId().name());
        n.put("id", tc.classId());
        ArrayNode entries = n.putArray("entries");
        for (TrafficClassInfo.Entry e : tc.entries()) {
            ObjectNode en = entries.addObject();
            en.put("index", e.index());
            en.put("match", e.match());
            en.put("classifiedAt", e.classification().name().toLowerCase(Locale.ROOT));
            en.put("does", MetronText.does(tc, e));
            ArrayNode rules = en.putArray("rules");
            e.rules().forEach(f -> rules.add(flowRule(f).put("text", MetronText.rule(f))));
        }
        n.put("disposition", tc.disposition().name().toLowerCase(Locale.ROOT));
        n.put("operations", tc.operations());
        n.put("group", tc.groupId());
        if (tc.tag() != null) {
            n.set("tag", tag(tc.tag()));
            n.put("mac", tc.tag().classMac(tc.classId()).toString().toLowerCase());
        }
        n.put("core", tc.core());
        n.put("server", MetronText.or(tc.server(), ""));
        n.put("needsServer", tc.needsServer());
        return n;
    }

    public static ObjectNode tagAllocation(TagAllocation t) {
        ObjectNode n = tag(t.tag());
        n.put("server", t.server().toString());
        n.put("nic", t.nic());
        n.put("chain", t.chainId().name());
        n.put("groupId", t.groupId());
        return n;
    }

    /** A refused server netcfg entry: {"device", "field" (under {@code metron}), "reason", "time" (ISO-8601)}. */
    public static ObjectNode refusedConfig(ServerConfigErrors.Refused r) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("device", r.device().toString());
        n.put("field", r.field());
        n.put("reason", r.reason());
        n.put("time", r.time().toString());
        return n;
    }

    public static ObjectNode server(ServerInfo s) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("id", s.id().toString());
        n.put("agent", s.agent());
        n.put("reachable", s.reachable());
        n.put("drained", s.drainedSinceMs().isPresent());
        s.drainedSinceMs().ifPresent(t -> n.put("drainedSince", java.time.Instant.ofEpochMilli(t).toString()));
        if (!s.reachable()) {
            n.put("error", s.error());
        }
        n.put("load", s.load());
        n.put("freeCores", s.freeCores());
        ArrayNode cores = n.putArray("cores");
        for (ServerInfo.CoreInfo c : s.cores()) {
            ObjectNode cn = cores.addObject();
            cn.put("id", c.id());
            cn.put("load", c.load());
            cn.put("available", c.available());
            cn.put("chain", c.pipeline());
        }
        ArrayNode nics = n.putArray("nics");
        for (ServerInfo.NicInfo nic : s.nics()) {
            ObjectNode nn = nics.addObject();
            nn.put("name", nic.name());
            nn.put("mac", nic.mac());
            nn.put("linkUp", nic.linkUp());
            nn.put("maxNicRules", nic.maxNicRules());
            nn.set("dispatch", dispatch(nic.dispatch()));
        }
        return n;
    }

    /**
     * A NIC's dispatch: the mode it runs, the mode asked (absent when none was), whether the agent chose it
     * ("auto"), the modes possible, the tag types it steers, the probed capabilities (absent for a kernel
     * interface, which is not probed) and the refused modes with their reasons.
     */
    public static ObjectNode dispatch(NicDispatch d) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("mode", d.active());
        if (!d.requested().isEmpty()) {
            n.put("requested", d.requested());
        }
        n.put("auto", d.automatic());
        n.put("summary", d.summary());
        d.possible().forEach(n.putArray("possible")::add);
        d.tagTypes().forEach(n.putArray("tagTypes")::add);
        if (d.probed()) {
            NicCapabilities c = d.capabilities();
            ObjectNode cn = n.putObject("capabilities");
            cn.put("driver", c.getDriver());
            cn.put("maxRxQueues", c.getMaxRxQueues());
            cn.put("rteFlow", c.getRteFlow());
            cn.put("rteFlowIsolate", c.getRteFlowIsolate());
            cn.put("rteFlowQueue", c.getRteFlowQueue());
            cn.put("rteFlowMark", c.getRteFlowMark());
            cn.put("rteFlowJump", c.getRteFlowJump());
            cn.put("vmdqPools", c.getVmdqPools());
            cn.put("rssOffloads", "0x" + Long.toHexString(c.getRssOffloads()));
            cn.put("retaSize", c.getRetaSize());
            cn.put("maxMacAddrs", c.getMaxMacAddrs());
            cn.put("vlanFilter", c.getVlanFilter());
            d.rteFlowErrors().forEach(cn.putArray("rteFlowErrors")::add);
            cn.put("summary", d.capabilitySummary());
        }
        ArrayNode refusals = n.putArray("refusals");
        for (NicDispatch.Refusal r : d.refusals()) {
            refusals.addObject().put("mode", r.mode()).put("reason", r.reason());
        }
        return n;
    }

    public static ObjectNode rule(RuleInfo r) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("chain", r.chainId().name());
        n.put("role", r.role().name().toLowerCase());
        n.setAll(flowRule(r.rule()));
        n.put("packets", r.packets());
        n.put("bytes", r.bytes());
        n.put("deviceRead", r.deviceRead());
        n.put("deviceError", r.deviceError());
        return n;
    }

    /** A switch rule: device, flow id (hex), priority, criteria and instructions. */
    public static ObjectNode flowRule(FlowRule f) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("device", f.deviceId().toString());
        n.put("id", Long.toHexString(f.id().value()));
        n.put("priority", f.priority());
        ArrayNode sel = n.putArray("selector");
        f.selector().criteria().forEach(c -> sel.add(c.toString()));
        ArrayNode tr = n.putArray("treatment");
        f.treatment().allInstructions().forEach(i -> tr.add(i.toString()));
        return n;
    }

    public static ObjectNode validation(ValidationReport v) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("chain", v.chainId().name());
        n.put("classes", v.classes());
        n.put("groups", v.groups());
        n.put("offloadRules", v.offloadRules());
        n.put("placeable", v.placement().isPresent());
        v.placement().ifPresent(p -> n.set("placement", placement(p)));
        if (!v.placementError().isEmpty()) {
            n.put("placementError", v.placementError());
        }
        return n;
    }

    /** Error body: {"error": FAULT, "message": what and where, "status": http code}. */
    public static ObjectNode error(MetronException e, int status) {
        ObjectNode n = MAPPER.createObjectNode();
        n.put("error", e.fault().name());
        n.put("message", e.getMessage());
        n.put("status", status);
        return n;
    }
}
