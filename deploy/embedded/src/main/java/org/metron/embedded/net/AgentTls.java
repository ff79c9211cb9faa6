package org.metron.embedded.net;

import com.fasterxml.jackson.databind.JsonNode;
import org.metron.drivers.agent.AgentEndpoint;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Objects;

/**
 * The files the embedded host needs to speak mutual TLS to an agent started with --tls-cert/--tls-key/--tls-ca:
 * the CA the agent's certificate chains to and the host's client certificate and PKCS#8 key, all PEM. The same
 * three fields as the ONOS netcfg's MetronServerConfig (trustCerts, certChain, privateKey). Immutable.
 */
public final class AgentTls {
    public final Path trustCerts;
    public final Path certChain;
    public final Path privateKey;

    /** @throws IllegalArgumentException naming {@code where} and the field when a file is missing or unreadable */
    public AgentTls(Path trustCerts, Path certChain, Path privateKey, String where) {
        this.trustCerts = readable(trustCerts, where, "trustCerts");
        this.certChain = readable(certChain, where, "certChain");
        this.privateKey = readable(privateKey, where, "privateKey");
    }

    /** Reads {@code {"trustCerts": ..., "certChain": ..., "privateKey": ...}}; every field is required. */
    static AgentTls fromJson(JsonNode n, String where) {
        return new AgentTls(field(n, where, "trustCerts"), field(n, where, "certChain"),
                field(n, where, "privateKey"), where);
    }

    /** The endpoint with these files: TLS to the agent, this client certificate. */
    public AgentEndpoint apply(AgentEndpoint e) {
        return e.toBuilder().trustCerts(trustCerts).clientCertificate(certChain, privateKey).build();
    }

    private static Path field(JsonNode n, String where, String name) {
        JsonNode v = n.get(name);
        if (v == null || !v.isTextual() || v.asText().isEmpty()) {
            throw new IllegalArgumentException(where + ": tls." + name + " missing (trustCerts, certChain and "
                    + "privateKey are all needed for mutual TLS)");
        }
        return Paths.get(v.asText());
    }

    private static Path readable(Path p, String where, String name) {
        Objects.requireNonNull(p, name);
        if (!Files.isReadable(p)) {
            throw new IllegalArgumentException(where + ": " + name + " " + p + " is not a readable file");
        }
        return p;
    }
}
