package org.metron.app.testing;

import org.metron.agent.v1.DeployPipelineRequest;
import org.metron.agent.v1.Egress;
import org.metron.agent.v1.FiveTuple;
import org.metron.agent.v1.FlowEntry;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.ImportStateRequest;
import org.metron.agent.v1.NicMatch;
import org.metron.agent.v1.NicRule;
import org.metron.agent.v1.PortShare;
import org.metron.agent.v1.StateTable;
import org.metron.agent.v1.TagType;
import org.metron.drivers.agent.AgentException.Code;
import org.metron.synth.SynthesisException;
import org.metron.synth.click.Arg;
import org.metron.synth.click.ClickParser;
import org.metron.synth.click.ElementDecl;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The requests {@link TestAgent} refuses and how, as the real agent does: agent/src/control/request_validation.cc
 * (field checks, INVALID_ARGUMENT), core/engine_backend.cc (unknown NICs and cores, ALREADY_EXISTS for tags) and
 * dispatch/steering_table.cc (NIC rule tables). Held to the agent by AgentContract. Only what a controller can
 * get wrong is modelled: Click is parsed by the synthesizer's parser and its classes checked against the agent's
 * element registry, not run.
 */
final class AgentRefusals {
    /**
     * The element classes of agent/src/elements/registry.cc, read from it (the agent's one list; a copy here
     * drifted from it before): its {"Name", make_element_...} entries.
     */
    static final Set<String> ELEMENTS = registeredElements(Paths.get("../agent/src/elements/registry.cc"));
    /** Element classes with a flow table (has_state() in agent/src/elements/rewriter.cc). */
    static final Set<String> STATEFUL = Set.of("IPRewriter", "SynthRewriter");
    /** FlowTable::kMaxCapacity (agent/src/elements/flow_table.h). */
    private static final long MAX_CAPACITY = 1L << 26;
    private static final Pattern MAC = Pattern.compile("[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}");

    private AgentRefusals() {
    }

    private static Set<String> registeredElements(Path registry) {
        try {
            Matcher m = Pattern.compile("\\{\"(\\w+)\", make_element_").matcher(Files.readString(registry));
            Set<String> out = new java.util.TreeSet<>();
            while (m.find()) {
                out.add(m.group(1));
            }
            if (out.isEmpty()) {
                throw new IllegalStateException("no element class found in " + registry.toAbsolutePath());
            }
            return Set.copyOf(out);
        } catch (IOException e) {
            throw new UncheckedIOException("the agent's element registry: " + registry.toAbsolutePath(), e);
        }
    }

    /** A refused request: the status code and the detail the agent would give. */
    static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final Code code;

        Refused(Code code, String detail) {
            super(detail, null, false, false);
            this.code = code;
        }
    }

    private static Refused invalid(String detail) {
        return new Refused(Code.INVALID_ARGUMENT, detail);
    }

    private static void id(String field, String id) {
        if (id.isEmpty()) {
            throw invalid(field + ": empty");
        }
    }

    /** A deploy's own faults: ids, NICs, egress, groups. */
    static void checkDeploy(DeployPipelineRequest r, Set<String> nics, Collection<Integer> workers) {
        id("pipeline_id", r.getPipelineId());
        id("ingress_nic", r.getIngressNic());
        checkEgress(r.getEgressList(), nics);
        checkGroups(r.getGroupsList(), false, workers);
        if (!nics.contains(r.getIngressNic())) {
            throw invalid("ingress_nic: no NIC named '" + r.getIngressNic() + "'");
        }
    }

    /** An update's own faults; {@code current}: the groups it replaces (state_from names one of them). */
    static void checkUpdate(List<GroupSpec> groups, List<Egress> egress, Set<String> nics,
                            Collection<Integer> workers, List<GroupSpec> current) {
        checkEgress(egress, nics);
        checkGroups(groups, true, workers);
        Set<String> existing = new HashSet<>();
        current.forEach(g -> existing.add(g.getGroupId()));
        for (int i = 0; i < groups.size(); i++) {
            for (String src : groups.get(i).getStateFromList()) {
                if (!existing.contains(src)) {
                    throw invalid("groups[" + i + "].state_from: no group '" + src + "'");
                }
            }
        }
    }

    private static void checkEgress(List<Egress> egress, Set<String> nics) {
        for (int i = 0; i < egress.size(); i++) {
            Egress e = egress.get(i);
            id("egress[" + i + "].nic", e.getNic());
            if (!e.getDstMac().isEmpty() && !MAC.matcher(e.getDstMac()).matches()) {
                throw invalid("egress[" + i + "].dst_mac: not a MAC address");
            }
            if (e.getVlan() > 4094) {
                throw invalid("egress[" + i + "].vlan: not a VLAN id 1..4094");
            }
            if (!nics.contains(e.getNic())) {
                throw invalid("egress[" + i + "].nic: no NIC named '" + e.getNic() + "'");
            }
        }
    }

    private static void checkGroups(List<GroupSpec> groups, boolean update, Collection<Integer> workers) {
        if (groups.isEmpty()) {
            throw invalid("groups: empty");
        }
        Set<String> ids = new HashSet<>();
        Set<List<Integer>> tags = new HashSet<>();
        Map<Integer, Integer> classes = new HashMap<>();
        Set<PortShare> shares = new HashSet<>();
        for (int i = 0; i < groups.size(); i++) {
            GroupSpec g = groups.get(i);
            String at = "groups[" + i + "]";
            id(at + ".group_id", g.getGroupId());
            if (!ids.add(g.getGroupId())) {
                throw invalid(at + ".group_id: repeats an earlier group");
            }
            int max = g.getTag().getType() == TagType.TAG_VLAN ? 4094 : 65535;
            if (g.getTag().getValue() < 1 || g.getTag().getValue() > max) {
                throw invalid(at + ".tag.value: " + g.getTag().getValue() + " outside 1.." + max);
            }
            if (!tags.add(List.of(g.getTag().getTypeValue(), g.getTag().getValue()))) {
                throw invalid(at + ".tag.value: " + g.getTag().getValue() + " is also an earlier group's");
            }
            // slices are not modelled: a class whole in two groups only within an update (old and new version)
            for (int c : g.getClassIdsList()) {
                if (c > 65535) {
                    throw invalid(at + ".class_ids: " + c + " exceeds 65535");
                }
                if (classes.containsKey(c) && !update && g.getSlicesCount() == 0) {
                    throw invalid(at + ".class_ids: " + c + " already belongs to groups[" + classes.get(c) + "]");
                }
                classes.put(c, i);
            }
            if (g.getPortShare().getCount() > 0 || g.getPortShare().getIndex() > 0) {
                PortShare ps = g.getPortShare();
                if (ps.getCount() == 0 || ps.getCount() > 65536 || ps.getIndex() >= ps.getCount()) {
                    throw invalid(at + ".port_share: " + ps.getIndex() + " of " + ps.getCount());
                }
                if (!shares.add(ps)) { // two groups would hand out the same external ports
                    throw invalid(at + ".port_share: also an earlier group's");
                }
            }
            if (!update && g.getStateFromCount() > 0) {
                throw invalid(at + ".state_from: only UpdatePipeline initialises state");
            }
            if (!workers.contains(g.getCore())) {
                throw invalid(at + ".core: " + g.getCore() + " is not a worker core");
            }
            statefulElements(g.getClickConfig(), at + ".click_config");
        }
    }

    /**
     * The stateful elements of a Click config, in order, as empty tables (element, kind); a config the agent
     * would not build is INVALID_ARGUMENT naming {@code field}.
     */
    static List<StateTable> statefulElements(String click, String field) {
        if (click.isBlank()) {
            throw invalid(field + ": empty");
        }
        Collection<ElementDecl> elements;
        try {
            elements = ClickParser.parse(click).elements().values();
        } catch (SynthesisException e) {
            throw invalid(field + ": " + e.getMessage());
        }
        List<StateTable> out = new ArrayList<>();
        for (ElementDecl e : elements) {
            if (!ELEMENTS.contains(e.className())) {
                throw invalid(field + ": line " + e.line() + ":" + e.column() + ": unknown element class '"
                        + e.className() + "'");
            }
            if (STATEFUL.contains(e.className())) {
                capacity(e, field);
                out.add(StateTable.newBuilder().setElement(e.name()).setKind(e.className()).build());
            }
        }
        return out;
    }

    /**
     * The flows per core a stateful element declares (CAPACITY / MAPPING_CAPACITY, 1..2^26; 0 = none, its table
     * grows), as agent/src/elements/rewriter_core.cc reads them.
     */
    private static long capacity(ElementDecl e, String field) {
        for (Arg a : e.args()) {
            String[] kv = a.normalized().split(" ", 2);
            if (kv.length == 2 && (kv[0].equals("CAPACITY") || kv[0].equals("MAPPING_CAPACITY"))) {
                long n;
                try {
                    n = Long.parseLong(kv[1]);
                } catch (NumberFormatException x) {
                    throw invalid(field + ": " + e.name() + ": " + kv[0] + " '" + kv[1] + "' is not a number");
                }
                if (n < 1 || n > MAX_CAPACITY) {
                    throw invalid(field + ": " + e.name() + ": " + kv[0] + " " + n + " outside 1.." + MAX_CAPACITY);
                }
                return n;
            }
        }
        return 0;
    }

    /** The flows a Click config's tables declare in all (a group runs on one core). */
    static long declaredFlows(String click) {
        long n = 0;
        for (ElementDecl e : ClickParser.parse(click).elements().values()) {
            n += STATEFUL.contains(e.className()) ? capacity(e, "click_config") : 0;
        }
        return n;
    }

    /** A NIC rule as the agent holds and lists it, or its refusal. */
    static NicRule nicRule(NicRule r, String at, Set<String> tableNics, Collection<Integer> workers) {
        id(at + ".nic", r.getNic());
        NicMatch m = r.getMatch();
        NicMatch.Builder canonical = m.toBuilder();
        if (!m.getEthDst().isEmpty()) {
            if (!MAC.matcher(m.getEthDst()).matches()) {
                throw invalid(at + ".match.eth_dst: not a MAC address");
            }
            if (!m.getEthDstMask().isEmpty() && !MAC.matcher(m.getEthDstMask()).matches()) {
                throw invalid(at + ".match.eth_dst_mask: not a MAC mask");
            }
            canonical.setEthDst(m.getEthDst().toLowerCase(Locale.ROOT)).setEthDstMask(m.getEthDstMask().isEmpty()
                    ? "ff:ff:ff:ff:ff:ff" : m.getEthDstMask().toLowerCase(Locale.ROOT));
        } else if (!m.getEthDstMask().isEmpty()) {
            throw invalid(at + ".match.eth_dst_mask: given without eth_dst");
        }
        if (m.getVlan() > 4094) {
            throw invalid(at + ".match.vlan: not a VLAN id 1..4094");
        }
        int version = Math.max(m.getIpSrc().size(), m.getIpDst().size());
        if (version != 0 && version != 4 && version != 16) {
            throw invalid(at + ".match.ip_src/ip_dst: neither 4 nor 16 bytes");
        }
        if (version != 0) { // the IP version lives in ether_type
            canonical.setEtherType(version == 4 ? 0x0800 : 0x86dd);
        }
        boolean ip = version != 0 || m.getEtherType() == 0x0800 || m.getEtherType() == 0x86dd;
        if (m.getIpProto() > 255 || (m.getIpProto() != 0 && !ip)) {
            throw invalid(at + ".match.ip_proto: " + m.getIpProto() + " needs an IP version and is at most 255");
        }
        switch (r.getAction().getActionCase()) {
            case ACTION_NOT_SET:
                throw invalid(at + ".action: not set: one of queue, drop, mark is required");
            case QUEUE:
                if (!workers.contains(r.getAction().getQueue())) {
                    throw invalid(at + ".action.queue: core " + r.getAction().getQueue() + " is not a worker core");
                }
                break;
            default:
                break;
        }
        if (!tableNics.contains(r.getNic())) {
            throw invalid(at + ".nic: \"" + r.getNic() + "\" is not a NIC with a rule table on this server");
        }
        return r.toBuilder().setMatch(canonical).build();
    }

    /** An ImportState's field faults (agent/src/control/request_validation.cc). */
    static void checkImport(ImportStateRequest r) {
        id("snapshot.pipeline_id", r.getSnapshot().getPipelineId());
        if (r.getTargetGroupId().isEmpty()) {
            id("snapshot.group_id", r.getSnapshot().getGroupId());
        }
        List<StateTable> tables = r.getSnapshot().getTablesList();
        for (int t = 0; t < tables.size(); t++) {
            String at = "snapshot.tables[" + t + "]";
            id(at + ".element", tables.get(t).getElement());
            id(at + ".kind", tables.get(t).getKind());
            for (FlowEntry e : tables.get(t).getEntriesList()) {
                tuple(at + ".key", e.getKey(), true);
                tuple(at + ".mapped", e.getMapped(), false);
            }
        }
    }

    private static void tuple(String at, FiveTuple t, boolean required) {
        if (!required && t.getSerializedSize() == 0) {
            return;
        }
        int src = t.getSrcIp().size();
        if ((src != 4 && src != 16) || t.getDstIp().size() != src) {
            throw invalid(at + ": addresses of 4 or 16 bytes, both of one version");
        }
        if (t.getSrcPort() > 0xffff || t.getDstPort() > 0xffff || t.getProto() > 0xff) {
            throw invalid(at + ": port over 65535 or protocol over 255");
        }
    }
}
