package org.metron.synth;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.synth.json.JsonText;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import static org.metron.synth.ChainJsonFields.bool;
import static org.metron.synth.ChainJsonFields.integer;
import static org.metron.synth.ChainJsonFields.list;
import static org.metron.synth.ChainJsonFields.obj;
import static org.metron.synth.ChainJsonFields.present;
import static org.metron.synth.ChainJsonFields.str;

/**
 * A service chain as the operator submits it (docs/contracts.md#chain-json, schema in
 * {@code chain.schema.json}): NFs written in Click or black boxes (docs/blackbox.md), links between NF interfaces, ingress and egress
 * interfaces, and the controller's deployment block. Immutable.
 */
public final class ChainSpec {
    private static final Set<String> TOP_KEYS = Set.of("name", "nfs", "links", "ingress", "egress", "deployment");
    private static final Set<String> NF_KEYS = Set.of("name", "click", "blackbox");
    private static final Set<String> LINK_KEYS = Set.of("from", "to");
    private static final Set<String> DEPLOYMENT_KEYS = Set.of("tagType", "cpuCores", "maxCpuCores", "autoScale",
            "ingressPoint", "egressPoint", "nics", "egressMac", "replyMac");
    private static final String NAME_PATTERN = "[A-Za-z_][A-Za-z0-9_-]*";

    private final String name;
    private final List<NfSpec> nfs;
    private final List<ChainLink> links;
    private final List<InterfaceRef> ingress;
    private final List<InterfaceRef> egress;
    private final Deployment deployment;

    /**
     * Creates a chain and checks it: unique NF names, links/ingress/egress naming declared NFs.
     * Interfaces inside the NFs' Click are checked when the chain is compiled.
     *
     * @throws SynthesisException naming the offending item
     */
    public ChainSpec(String name, List<NfSpec> nfs, List<ChainLink> links, List<InterfaceRef> ingress,
                     List<InterfaceRef> egress, Deployment deployment) {
        this.name = Objects.requireNonNull(name, "name");
        this.nfs = List.copyOf(nfs);
        this.links = List.copyOf(links);
        this.ingress = List.copyOf(ingress);
        this.egress = List.copyOf(egress);
        this.deployment = Objects.requireNonNull(deployment, "deployment");
        if (!name.matches(NAME_PATTERN)) {
            throw new SynthesisException("chain JSON: chain name '" + name + "' must match " + NAME_PATTERN);
        }
        Set<String> names = new HashSet<>();
        for (NfSpec nf : this.nfs) {
            if (!nf.name().matches(NAME_PATTERN)) {
                throw new SynthesisException("chain JSON: NF name '" + nf.name() + "' must match " + NAME_PATTERN);
            }
            if (!names.add(nf.name())) {
                throw new SynthesisException("chain JSON: NF name '" + nf.name() + "' is used twice");
            }
        }
        if (this.nfs.isEmpty()) {
            throw new SynthesisException("chain JSON: 'nfs' is empty, a chain needs at least one NF");
        }
        if (this.ingress.isEmpty() || this.egress.isEmpty()) {
            throw new SynthesisException("chain JSON: a chain needs at least one ingress and one egress interface");
        }
        for (ChainLink l : this.links) {
            checkNf(names, l.from(), "link from");
            checkNf(names, l.to(), "link to");
        }
        this.ingress.forEach(r -> checkNf(names, r, "ingress"));
        this.egress.forEach(r -> checkNf(names, r, "egress"));
    }

    private static void checkNf(Set<String> names, InterfaceRef ref, String where) {
        if (!names.contains(ref.nf())) {
            throw new SynthesisException("chain JSON: " + where + " '" + ref + "' names no NF of this chain "
                    + "(dangling edge)");
        }
    }

    /**
     * Reads chain JSON.
     *
     * @param json the document
     * @return the chain
     * @throws SynthesisException for malformed JSON (line:col), unknown keys, wrong types, dangling names
     */
    public static ChainSpec fromJson(String json) {
        return fromJson(JsonText.read(Objects.requireNonNull(json, "json")));
    }

    /**
     * Reads a chain JSON document already parsed (by {@link JsonText#read} or any Jackson reader).
     *
     * @throws SynthesisException for unknown keys, wrong types, dangling names
     */
    public static ChainSpec fromJson(JsonNode root) {
        JsonNode top = obj(root, "chain", TOP_KEYS);
        String name = str(top, "name", "chain", true);
        List<NfSpec> nfs = new ArrayList<>();
        for (JsonNode o : list(top, "nfs", "chain", true)) {
            String where = "nfs[" + nfs.size() + "]";
            JsonNode m = obj(o, where, NF_KEYS);
            String nfName = str(m, "name", where, true);
            where += " (" + nfName + ")";
            if (present(m, "click") && present(m, "blackbox")) {
                throw new SynthesisException("chain JSON: " + where + " has both 'click' and 'blackbox'; an NF is "
                        + "either Click or a black box (docs/blackbox.md)");
            }
            if (!present(m, "click") && !present(m, "blackbox")) {
                throw new SynthesisException("chain JSON: " + where + " needs 'click' (its Click configuration) or "
                        + "'blackbox' (a separate process: docs/blackbox.md)");
            }
            nfs.add(present(m, "blackbox") ? NfSpec.blackBox(nfName, BlackBoxSpec.fromJson(m.get("blackbox"), where))
                    : NfSpec.of(nfName, str(m, "click", where, true)));
        }
        List<ChainLink> links = new ArrayList<>();
        for (JsonNode o : list(top, "links", "chain", false)) {
            String where = "links[" + links.size() + "]";
            JsonNode m = obj(o, where, LINK_KEYS);
            links.add(ChainLink.of(InterfaceRef.parse(str(m, "from", where, true), where + ".from"),
                    InterfaceRef.parse(str(m, "to", where, true), where + ".to")));
        }
        List<InterfaceRef> ingress = refs(top, "ingress");
        List<InterfaceRef> egress = refs(top, "egress");
        Deployment dep = Deployment.DEFAULT;
        if (present(top, "deployment")) {
            JsonNode d = obj(top.get("deployment"), "deployment", DEPLOYMENT_KEYS);
            String tag = present(d, "tagType") ? str(d, "tagType", "deployment", true) : "mac";
            if (!tag.equals("mac") && !tag.equals("vlan")) {
                throw new SynthesisException("chain JSON: deployment.tagType '" + tag + "' must be \"mac\" or \"vlan\"");
            }
            int cores = integer(d, "cpuCores", "deployment", 1);
            dep = new Deployment(tag.equals("mac") ? TagType.MAC : TagType.VLAN, cores,
                    integer(d, "maxCpuCores", "deployment", cores), bool(d, "autoScale", "deployment", false),
                    str(d, "ingressPoint", "deployment", false), str(d, "egressPoint", "deployment", false),
                    integer(d, "nics", "deployment", 1), str(d, "egressMac", "deployment", false),
                    str(d, "replyMac", "deployment", false));
        }
        return new ChainSpec(name, nfs, links, ingress, egress, dep);
    }

    private static List<InterfaceRef> refs(JsonNode top, String key) {
        List<InterfaceRef> out = new ArrayList<>();
        for (JsonNode o : list(top, key, "chain", true)) {
            if (!o.isTextual()) {
                throw new SynthesisException("chain JSON: " + key + "[" + out.size() + "] must be a string nf.iface");
            }
            out.add(InterfaceRef.parse(o.asText(), key + "[" + out.size() + "]"));
        }
        return out;
    }

    /** Writes the chain back as chain JSON (the form {@link #fromJson} reads). */
    public String toJson() {
        ObjectNode top = JsonText.MAPPER.createObjectNode();
        top.put("name", name);
        ArrayNode nfl = top.putArray("nfs");
        for (NfSpec nf : nfs) {
            ObjectNode o = nfl.addObject().put("name", nf.name());
            if (nf.isBlackBox()) {
                nf.blackBox().get().toJson(o.putObject("blackbox"));
            } else {
                o.put("click", nf.click());
            }
        }
        ArrayNode ll = top.putArray("links");
        links.forEach(l -> ll.addObject().put("from", l.from().toString()).put("to", l.to().toString()));
        ArrayNode in = top.putArray("ingress");
        ingress.forEach(r -> in.add(r.toString()));
        ArrayNode out = top.putArray("egress");
        egress.forEach(r -> out.add(r.toString()));
        ObjectNode d = top.putObject("deployment");
        d.put("tagType", deployment.tagType().jsonName());
        d.put("cpuCores", deployment.cpuCores());
        d.put("maxCpuCores", deployment.maxCpuCores());
        d.put("autoScale", deployment.autoScale());
        deployment.ingressPoint().ifPresent(p -> d.put("ingressPoint", p));
        deployment.egressPoint().ifPresent(p -> d.put("egressPoint", p));
        d.put("nics", deployment.nics());
        deployment.egressMac().ifPresent(m -> d.put("egressMac", m));
        deployment.replyMac().ifPresent(m -> d.put("replyMac", m));
        return JsonText.write(top);
    }

    public String name() {
        return name;
    }

    public List<NfSpec> nfs() {
        return nfs;
    }

    /** The NF with this name. */
    public NfSpec nf(String nfName) {
        for (NfSpec nf : nfs) {
            if (nf.name().equals(nfName)) {
                return nf;
            }
        }
        throw new SynthesisException("chain '" + name + "' has no NF '" + nfName + "'");
    }

    public List<ChainLink> links() {
        return links;
    }

    public List<InterfaceRef> ingress() {
        return ingress;
    }

    /** Egress interfaces; index = {@code [k]output} of group configs and TO_EGRESS(k). */
    public List<InterfaceRef> egress() {
        return egress;
    }

    public Deployment deployment() {
        return deployment;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof ChainSpec)) {
            return false;
        }
        ChainSpec c = (ChainSpec) o;
        return name.equals(c.name) && nfs.equals(c.nfs) && links.equals(c.links) && ingress.equals(c.ingress)
                && egress.equals(c.egress) && deployment.equals(c.deployment);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, nfs, links, ingress, egress, deployment);
    }

    @Override
    public String toString() {
        return "chain " + name + " " + nfs;
    }
}
