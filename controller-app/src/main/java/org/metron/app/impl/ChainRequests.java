package org.metron.app.impl;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.ChainId;
import org.metron.app.api.Deployments;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.RequestRules;
import org.metron.synth.ChainSpec;
import org.metron.synth.Deployment;
import org.metron.synth.SynthesisException;
import org.metron.synth.json.JsonText;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;

import java.util.List;

/**
 * Turns an operator's request body into a {@link ParsedChain}, parsing it once: Jackson reads the body into a
 * tree (the synthesizer's strict reader: no duplicate keys, bounded nesting, line:col on errors), the original
 * Metron netcfg format is translated as a tree ({@link NetcfgTranslator}), and the synthesizer reads the chain
 * from that tree (the schema's one owner); then the deployment fields the controller needs are checked.
 */
public final class ChainRequests {
    private ChainRequests() {
    }

    /**
     * Parses one chain.
     *
     * @param body request body
     * @return the parsed chain
     * @throws MetronException INVALID_JSON (with line:col) or INVALID_CHAIN (naming the field/NF)
     */
    public static ParsedChain parse(String body) {
        JsonNode root = readTree(body);
        JsonNode chain = root;
        if (NetcfgTranslator.isNetcfg(root)) {
            List<ObjectNode> chains = NetcfgTranslator.translate(root);
            if (chains.size() != 1) {
                throw new MetronException(Fault.INVALID_CHAIN, "netcfg request must add exactly one service "
                        + "chain, found " + chains.size());
            }
            chain = chains.get(0);
        }
        ChainSpec spec;
        try {
            spec = ChainSpec.fromJson(chain);
        } catch (SynthesisException e) {
            throw new MetronException(Fault.INVALID_CHAIN, e.getMessage(), e);
        }
        if (!RequestRules.chainName(spec.name())) {
            throw new MetronException(Fault.INVALID_CHAIN, "chain name '" + spec.name() + "' must match "
                    + RequestRules.CHAIN_NAME + " (a chain id that the synthesizer reads)");
        }
        ChainId id = ChainId.of(spec.name());
        return new ParsedChain(id, spec, deployment(spec.deployment()));
    }

    /** Reads JSON, mapping syntax errors to INVALID_JSON with the position. */
    static JsonNode readTree(String body) {
        if (body == null || body.isBlank()) {
            throw new MetronException(Fault.INVALID_JSON, "request body is empty, expected a chain JSON object");
        }
        JsonNode root;
        try {
            root = JsonText.read(body);
        } catch (SynthesisException e) {
            String why = e.reason().startsWith("chain JSON: ") ? e.reason().substring(12) : e.reason();
            throw new MetronException(Fault.INVALID_JSON, "invalid JSON" + (e.line() > 0 ? " at line " + e.line()
                    + ":" + e.column() : "") + ": " + why, e);
        }
        if (!root.isObject()) {
            throw new MetronException(Fault.INVALID_JSON, "request body must be a JSON object");
        }
        return root;
    }

    /**
     * The chain's deployment as the controller keeps it: both points required (placement starts from them),
     * points and MACs checked as ONOS reads them and kept in ONOS's canonical text.
     */
    private static Deployment deployment(Deployment d) {
        ConnectPoint in = point(d.ingressPoint().orElse(null), "deployment.ingressPoint");
        ConnectPoint out = point(d.egressPoint().orElse(null), "deployment.egressPoint");
        return Deployments.of(d.tagType(), d.cpuCores(), d.maxCpuCores(), d.autoScale(), in, out, d.nics(),
                mac(d.egressMac().orElse(null), "deployment.egressMac"),
                mac(d.replyMac().orElse(null), "deployment.replyMac"));
    }

    /** A next hop's MAC: a unicast address (frames to a group address would reach no single host). */
    private static MacAddress mac(String text, String field) {
        if (text == null) {
            return null;
        }
        if (!RequestRules.unicastMac(text)) {
            // the message tells a malformed address from a group or zero one
            throw new MetronException(Fault.INVALID_CHAIN, field + " '" + text + "' " + (RequestRules.mac(text)
                    ? "must be a host's unicast address" : "is not a MAC address (six hex bytes, e.g. "
                    + "\"02:00:00:00:00:02\")"));
        }
        return MacAddress.valueOf(text);
    }

    private static ConnectPoint point(String text, String field) {
        if (text == null) {
            throw new MetronException(Fault.INVALID_CHAIN, field + " is required (a connect point such as "
                    + "\"of:0000000000000001/1\")");
        }
        if (!RequestRules.connectPoint(text)) {
            throw new MetronException(Fault.INVALID_CHAIN, field + " '" + text + "' is not a connect point "
                    + "(device/port, e.g. \"of:0000000000000001/1\": " + RequestRules.CONNECT_POINT + ")");
        }
        return ConnectPoint.deviceConnectPoint(text);
    }
}
