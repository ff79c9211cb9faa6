package org.metron.drivers.provider;

import com.fasterxml.jackson.databind.JsonNode;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.server.MetronDeviceIds;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.config.Config;
import org.onosproject.net.config.InvalidFieldException;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * netcfg of one Metron server, under {@code devices/metron:<host>:<port>/metron}: the agent is at the host and
 * gRPC port the device id names. Every field is optional; an empty object declares a plain-text server.
 * <pre>
 * "metron": {
 *   "deadlineMs": 5000, "buildDeadlineMs": 30000,
 *   "trustCerts": "/etc/metron/ca.pem", "certChain": "/etc/metron/ctl.pem", "privateKey": "/etc/metron/ctl.key",
 *   "nics": { "eth0": "of:0000000000000001/3" }
 * }
 * </pre>
 * {@code nics} names, per NIC of the agent, the switch port its cable goes to: the provider reports a link each
 * way, which is how placement finds the path to a server. {@code deadlineMs} bounds every agent call but those that
 * build or fill a pipeline, which {@code buildDeadlineMs} bounds (AgentEndpoint's defaults: 5 s and 30 s).
 */
public class MetronServerConfig extends Config<DeviceId> {

    public static final String KEY = "metron";
    static final String DEADLINE_MS = "deadlineMs";
    static final String BUILD_DEADLINE_MS = "buildDeadlineMs";
    static final String TRUST_CERTS = "trustCerts";
    static final String CERT_CHAIN = "certChain";
    static final String PRIVATE_KEY = "privateKey";
    static final String NICS = "nics";

    @Override
    public boolean isValid() {
        try {
            check();
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * Checks the whole entry.
     *
     * @throws IllegalArgumentException naming the device and what is wrong
     */
    public void check() {
        if (!MetronDeviceIds.isMetronServer(subject())) {
            throw new IllegalArgumentException(subject() + ": a Metron server's id is "
                                                       + MetronDeviceIds.SCHEME + ":<host>:<port>");
        }
        boolean known;
        try {
            known = hasOnlyFields(DEADLINE_MS, BUILD_DEADLINE_MS, TRUST_CERTS, CERT_CHAIN, PRIVATE_KEY, NICS);
        } catch (InvalidFieldException e) {
            known = false;
        }
        if (!known) {
            throw new IllegalArgumentException(subject() + ": " + KEY + " takes only " + DEADLINE_MS + ", "
                                                       + BUILD_DEADLINE_MS + ", " + TRUST_CERTS + ", " + CERT_CHAIN
                                                       + ", " + PRIVATE_KEY + ", " + NICS);
        }
        endpoint();
        nics();
    }

    /** A positive number of milliseconds under {@code key}, if given. */
    private java.util.Optional<Duration> millis(String key) {
        if (!object.has(key)) {
            return java.util.Optional.empty();
        }
        JsonNode d = object.get(key);
        if (!d.canConvertToLong() || d.asLong() <= 0) {
            throw new IllegalArgumentException(subject() + ": " + key + " must be a positive number, got " + d);
        }
        return java.util.Optional.of(Duration.ofMillis(d.asLong()));
    }

    /**
     * How to reach the agent.
     *
     * @throws IllegalArgumentException when the deadline or the TLS files are not usable
     */
    public AgentEndpoint endpoint() {
        AgentEndpoint.Builder b = MetronDeviceIds.endpoint(subject()).toBuilder();
        millis(DEADLINE_MS).ifPresent(b::deadline);
        millis(BUILD_DEADLINE_MS).ifPresent(b::buildDeadline);
        String trust = get(TRUST_CERTS, null);
        String chain = get(CERT_CHAIN, null);
        String key = get(PRIVATE_KEY, null);
        if (trust != null) {
            b.trustCerts(Path.of(trust));
        }
        if (chain != null || key != null) {
            b.clientCertificate(chain == null ? null : Path.of(chain), key == null ? null : Path.of(key));
        }
        return b.build();
    }

    /**
     * NIC name → the switch port it is cabled to.
     *
     * @throws IllegalArgumentException naming the NIC whose port is not {@code <device>/<port>}
     */
    public Map<String, ConnectPoint> nics() {
        Map<String, ConnectPoint> out = new LinkedHashMap<>();
        JsonNode n = object.path(NICS);
        if (n.isMissingNode()) {
            return out;
        }
        if (!n.isObject()) {
            throw new IllegalArgumentException(subject() + ": " + NICS + " must map NIC names to switch ports");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            try {
                out.put(e.getKey(), ConnectPoint.deviceConnectPoint(e.getValue().asText()));
            } catch (RuntimeException bad) {
                throw new IllegalArgumentException(subject() + ": " + NICS + "." + e.getKey() + ": '"
                                                           + e.getValue().asText()
                                                           + "' is not a switch port (<device>/<port>)", bad);
            }
        }
        return out;
    }
}
