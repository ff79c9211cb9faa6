package org.metron.drivers.provider;

import com.fasterxml.jackson.databind.JsonNode;
import org.metron.drivers.agent.AgentEndpoint;
import org.metron.drivers.server.MetronDeviceIds;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.config.Config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

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
    private static final Set<String> FIELDS =
            Set.of(DEADLINE_MS, BUILD_DEADLINE_MS, TRUST_CERTS, CERT_CHAIN, PRIVATE_KEY, NICS);

    /** Told of every verdict of {@link #isValid()}, which ONOS asks before it applies (or refuses) an entry. */
    public interface Verdicts {
        Verdicts NONE = new Verdicts() {
            @Override
            public void refused(DeviceId device, String field, String reason) {
            }

            @Override
            public void accepted(DeviceId device) {
            }
        };

        void refused(DeviceId device, String field, String reason);

        void accepted(DeviceId device);
    }

    private final Verdicts verdicts;

    public MetronServerConfig() {
        this(Verdicts.NONE);
    }

    /** A config whose {@link #isValid()} verdicts go to {@code verdicts} (the provider's refusal record). */
    public MetronServerConfig(Verdicts verdicts) {
        this.verdicts = verdicts;
    }

    /**
     * ONOS's NetworkConfigManager asks this before it applies an entry; on false it refuses the entry silently
     * (its REST answers 207), so the refusal is told to {@link Verdicts} here, naming the field.
     */
    @Override
    public boolean isValid() {
        try {
            check();
        } catch (InvalidServerConfigException e) {
            verdicts.refused(e.device(), e.field(), e.reason());
            return false;
        }
        verdicts.accepted(subject());
        return true;
    }

    /**
     * Checks the whole entry.
     *
     * @throws InvalidServerConfigException naming the device, the field and what is wrong
     */
    public void check() {
        if (!MetronDeviceIds.isMetronServer(subject())) {
            throw new InvalidServerConfigException(subject(), "id", "a Metron server's id is "
                    + MetronDeviceIds.SCHEME + ":<host>:<port>");
        }
        for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw new InvalidServerConfigException(subject(), f, KEY + " takes only " + DEADLINE_MS + ", "
                        + BUILD_DEADLINE_MS + ", " + TRUST_CERTS + ", " + CERT_CHAIN + ", " + PRIVATE_KEY + ", "
                        + NICS + " (not " + f + ")");
            }
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
            throw new InvalidServerConfigException(subject(), key, key + " must be a positive number, got " + d);
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
        String trust = readable(TRUST_CERTS);
        String chain = readable(CERT_CHAIN);
        String key = readable(PRIVATE_KEY);
        if (trust != null) {
            b.trustCerts(Path.of(trust));
        }
        if (chain != null || key != null) {
            b.clientCertificate(chain == null ? null : Path.of(chain), key == null ? null : Path.of(key));
        }
        try {
            return b.build();
        } catch (IllegalArgumentException e) {
            // what is left for the endpoint to refuse is a TLS file missing beside another
            String field = chain != null && key == null ? PRIVATE_KEY : chain == null && key != null ? CERT_CHAIN
                    : TRUST_CERTS;
            throw new InvalidServerConfigException(subject(), field, e.getMessage(), e);
        }
    }

    /** The TLS file named under {@code field}, if any, which must be readable. */
    private String readable(String field) {
        String file = get(field, null);
        if (file != null && !Files.isReadable(Path.of(file))) {
            throw new InvalidServerConfigException(subject(), field, field + ": cannot read TLS file " + file);
        }
        return file;
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
            throw new InvalidServerConfigException(subject(), NICS, NICS + " must map NIC names to switch ports");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            try {
                out.put(e.getKey(), ConnectPoint.deviceConnectPoint(e.getValue().asText()));
            } catch (RuntimeException bad) {
                throw new InvalidServerConfigException(subject(), NICS + "." + e.getKey(), NICS + "." + e.getKey()
                        + ": '" + e.getValue().asText() + "' is not a switch port (<device>/<port>)", bad);
            }
        }
        return out;
    }
}
