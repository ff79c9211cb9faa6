package org.metron.app.impl;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.metron.app.api.ChainId;
import org.metron.app.api.DeploymentSpec;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.TagType;
import org.metron.synth.ChainSpec;
import org.metron.synth.Deployment;
import org.metron.synth.SynthesisException;
import org.onlab.packet.MacAddress;
import org.onosproject.net.ConnectPoint;

import java.util.List;

/**
 * Turns an operator's request body into a {@link ParsedChain}: detects the original Metron netcfg format and
 * translates it ({@link NetcfgTranslator}), reads the chain with the synthesizer's parser (the schema's one
 * owner) and checks the deployment fields the controller needs.
 */
public final class ChainRequests {
    private static final ObjectMapper MAPPER = new ObjectMapper();

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
        String json = body;
        if (NetcfgTranslator.isNetcfg(root)) {
            List<String> chains = NetcfgTranslator.translate(root);
            if (chains.size() != 1) {
                throw new MetronException(Fault.INVALID_CHAIN, "netcfg request must add exactly one service "
                        + "chain, found " + chains.size());
            }
            json = chains.get(0);
        }
        ChainSpec spec;
        try {
            spec = ChainSpec.fromJson(json);
        } catch (SynthesisException e) {
            throw new MetronException(Fault.INVALID_CHAIN, e.getMessage(), e);
        }
        ChainId id = ChainId.of(spec.name());
        return new ParsedChain(id, spec, deployment(spec.deployment()));
    }

    /** Reads JSON, mapping syntax errors to INVALID_JSON with the position. */
    static JsonNode readTree(String body) {
        if (body == null || body.isBlank()) {
            throw new MetronException(Fault.INVALID_JSON, "request body is empty, expected a chain JSON object");
        }
        requireShallow(body);
        try {
            JsonNode root = MAPPER.readTree(body);
            if (root == null || !root.isObject()) {
                throw new MetronException(Fault.INVALID_JSON, "request body must be a JSON object");
            }
            return root;
        } catch (JsonProcessingException e) {
            JsonLocation at = e.getLocation();
            String where = at == null ? "" : " at line " + at.getLineNr() + ":" + at.getColumnNr();
            throw new MetronException(Fault.INVALID_JSON, "invalid JSON" + where + ": " + e.getOriginalMessage(), e);
        }
    }

    /** Deeper than any chain could be; Jackson's recursive tree reader overflows the stack on ~10^4 levels. */
    static final int MAX_DEPTH = 64;

    /** Rejects nesting deeper than {@link #MAX_DEPTH}, naming where it gets too deep, before Jackson reads it. */
    private static void requireShallow(String body) {
        int depth = 0;
        int line = 1;
        int col = 0;
        boolean inString = false;
        boolean escaped = false;
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            col++;
            if (c == '\n') {
                line++;
                col = 0;
            } else if (inString) {
                if (escaped) {
                    escaped = false;
                } else if (c == '\\') {
                    escaped = true;
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == '{' || c == '[') {
                if (++depth > MAX_DEPTH) {
                    throw new MetronException(Fault.INVALID_JSON, "invalid JSON at line " + line + ":" + col
                            + ": nested deeper than " + MAX_DEPTH + " levels");
                }
            } else if (c == '}' || c == ']') {
                depth--;
            }
        }
    }

    private static DeploymentSpec deployment(Deployment d) {
        ConnectPoint in = point(d.ingressPoint().orElse(null), "deployment.ingressPoint");
        ConnectPoint out = point(d.egressPoint().orElse(null), "deployment.egressPoint");
        return new DeploymentSpec(d.tagType() == Deployment.TagType.MAC ? TagType.MAC : TagType.VLAN,
                d.cpuCores(), d.maxCpuCores(), d.autoScale(), in, out, d.nics(),
                mac(d.egressMac().orElse(null), "deployment.egressMac"),
                mac(d.replyMac().orElse(null), "deployment.replyMac"));
    }

    /** A next hop's MAC: a unicast address (frames to a group address would reach no single host). */
    private static MacAddress mac(String text, String field) {
        if (text == null) {
            return null;
        }
        MacAddress mac;
        try {
            mac = MacAddress.valueOf(text);
        } catch (IllegalArgumentException e) {
            throw new MetronException(Fault.INVALID_CHAIN, field + " '" + text + "' is not a MAC address "
                    + "(six hex bytes, e.g. \"02:00:00:00:00:02\")", e);
        }
        if (mac.isMulticast() || mac.isBroadcast() || mac.equals(MacAddress.ZERO)) {
            throw new MetronException(Fault.INVALID_CHAIN, field + " '" + text + "' must be a host's unicast "
                    + "address");
        }
        return mac;
    }

    private static ConnectPoint point(String text, String field) {
        if (text == null) {
            throw new MetronException(Fault.INVALID_CHAIN, field + " is required (a connect point such as "
                    + "\"of:0000000000000001/1\")");
        }
        try {
            return ConnectPoint.deviceConnectPoint(text);
        } catch (IllegalArgumentException e) {
            throw new MetronException(Fault.INVALID_CHAIN, field + " '" + text + "' is not a connect point "
                    + "(device/port, e.g. \"of:0000000000000001/1\")", e);
        }
    }
}
