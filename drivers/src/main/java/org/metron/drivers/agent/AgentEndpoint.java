package org.metron.drivers.agent;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import static com.google.common.base.Preconditions.checkArgument;

/**
 * Where and how to reach one agent: address, per-call deadlines and, when configured, mutual TLS.
 * Immutable; validated on construction so a bad endpoint fails where it is configured, not on first call.
 */
public final class AgentEndpoint {

    /** Per-call deadline used unless configured otherwise. */
    public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(5);
    /**
     * Deadline of the calls that build or fill a pipeline (DeployPipeline, UpdatePipeline, ImportState) unless
     * configured otherwise: the agent compiles classifiers and DPI automata or loads flow state there, which takes
     * seconds for large rule and pattern sets and longer on a busy server (fw-dpi's DeployPipeline took more than
     * 5 s at load 20 on a 2-CPU machine, 0.7 s idle), while a query is answered at once.
     */
    public static final Duration DEFAULT_BUILD_DEADLINE = Duration.ofSeconds(30);

    private final String host;
    private final int port;
    private final Duration deadline;
    private final Duration buildDeadline;
    private final Path certChain;
    private final Path privateKey;
    private final Path trustCerts;

    private AgentEndpoint(Builder b) {
        checkArgument(b.host != null && !b.host.isBlank(), "agent endpoint: host must not be empty");
        checkArgument(b.port > 0 && b.port < 65536, "agent endpoint %s: port %s is not in 1..65535", b.host, b.port);
        checkArgument(b.deadline != null && !b.deadline.isNegative() && !b.deadline.isZero(),
                      "agent endpoint %s:%s: deadline must be positive, got %s", b.host, b.port, b.deadline);
        checkArgument(b.buildDeadline != null && !b.buildDeadline.isNegative() && !b.buildDeadline.isZero(),
                      "agent endpoint %s:%s: build deadline must be positive, got %s", b.host, b.port,
                      b.buildDeadline);
        checkArgument((b.certChain == null) == (b.privateKey == null),
                      "agent endpoint %s:%s: a client certificate needs both certChain and privateKey", b.host, b.port);
        checkArgument(b.certChain == null || b.trustCerts != null,
                      "agent endpoint %s:%s: a client certificate needs trustCerts to verify the agent",
                      b.host, b.port);
        for (Path p : new Path[]{b.certChain, b.privateKey, b.trustCerts}) {
            checkArgument(p == null || Files.isReadable(p), "agent endpoint %s:%s: cannot read TLS file %s",
                          b.host, b.port, p);
        }
        this.host = b.host;
        this.port = b.port;
        this.deadline = b.deadline;
        this.buildDeadline = b.buildDeadline;
        this.certChain = b.certChain;
        this.privateKey = b.privateKey;
        this.trustCerts = b.trustCerts;
    }

    /** Plain-text endpoint with the default deadline. */
    public static AgentEndpoint of(String host, int port) {
        return builder().host(host).port(port).build();
    }

    /**
     * Parses {@code host:port} ({@code [v6addr]:port} for IPv6).
     *
     * @throws IllegalArgumentException naming the text when it is not host:port
     */
    public static AgentEndpoint parse(String hostPort) {
        Objects.requireNonNull(hostPort, "agent endpoint: null address");
        int colon = hostPort.lastIndexOf(':');
        checkArgument(colon > 0 && colon < hostPort.length() - 1,
                      "agent endpoint '%s': expected host:port", hostPort);
        String host = hostPort.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(hostPort.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("agent endpoint '" + hostPort + "': port is not a number", e);
        }
        return of(host, port);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from this endpoint's values. */
    public Builder toBuilder() {
        Builder b = new Builder().host(host).port(port).deadline(deadline).buildDeadline(buildDeadline);
        b.certChain = certChain;
        b.privateKey = privateKey;
        b.trustCerts = trustCerts;
        return b;
    }

    public String host() {
        return host;
    }

    public int port() {
        return port;
    }

    /** "host:port", the name errors use for this agent. */
    public String target() {
        return host.indexOf(':') >= 0 ? "[" + host + "]:" + port : host + ":" + port;
    }

    public Duration deadline() {
        return deadline;
    }

    /** The deadline of calls that build or fill a pipeline ({@link #DEFAULT_BUILD_DEADLINE}). */
    public Duration buildDeadline() {
        return buildDeadline;
    }

    /** True when the channel is TLS (a CA to trust the agent is configured). */
    public boolean tls() {
        return trustCerts != null;
    }

    public Optional<Path> certChain() {
        return Optional.ofNullable(certChain);
    }

    public Optional<Path> privateKey() {
        return Optional.ofNullable(privateKey);
    }

    public Optional<Path> trustCerts() {
        return Optional.ofNullable(trustCerts);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof AgentEndpoint)) {
            return false;
        }
        AgentEndpoint that = (AgentEndpoint) o;
        return port == that.port && host.equals(that.host) && deadline.equals(that.deadline)
                && buildDeadline.equals(that.buildDeadline)
                && Objects.equals(certChain, that.certChain) && Objects.equals(privateKey, that.privateKey)
                && Objects.equals(trustCerts, that.trustCerts);
    }

    @Override
    public int hashCode() {
        return Objects.hash(host, port, deadline, buildDeadline, certChain, privateKey, trustCerts);
    }

    @Override
    public String toString() {
        return target() + (tls() ? " (tls" + (certChain != null ? ", client cert" : "") + ")" : "")
                + " deadline " + deadline.toMillis() + "ms, build " + buildDeadline.toMillis() + "ms";
    }

    /** Builder; {@link #build()} validates. */
    public static final class Builder {
        private String host;
        private int port;
        private Duration deadline = DEFAULT_DEADLINE;
        private Duration buildDeadline = DEFAULT_BUILD_DEADLINE;
        private Path certChain;
        private Path privateKey;
        private Path trustCerts;

        private Builder() {
        }

        public Builder host(String host) {
            this.host = host;
            return this;
        }

        public Builder port(int port) {
            this.port = port;
            return this;
        }

        public Builder deadline(Duration deadline) {
            this.deadline = deadline;
            return this;
        }

        public Builder buildDeadline(Duration buildDeadline) {
            this.buildDeadline = buildDeadline;
            return this;
        }

        /** TLS: trust the agent's certificate when it chains to these CA certificates (PEM). */
        public Builder trustCerts(Path caPem) {
            this.trustCerts = caPem;
            return this;
        }

        /** TLS: present this client certificate chain and PKCS#8 key (PEM) to the agent. */
        public Builder clientCertificate(Path certChainPem, Path privateKeyPem) {
            this.certChain = certChainPem;
            this.privateKey = privateKeyPem;
            return this;
        }

        public AgentEndpoint build() {
            return new AgentEndpoint(this);
        }
    }
}
