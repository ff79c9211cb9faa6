package org.metron.app.api;

import com.google.common.collect.ImmutableList;
import org.metron.drivers.server.NicDispatch;
import org.onosproject.net.DeviceId;

import java.util.List;
import java.util.Objects;

/** A Metron server as last reported by its agent: reachability, cores with load, NICs. */
public final class ServerInfo {
    /** One core: id, load 0..1 over the agent's last interval, chain (pipeline) using it or empty. */
    public static final class CoreInfo {
        private final int id;
        private final double load;
        private final boolean available;
        private final String pipeline;

        public CoreInfo(int id, double load, boolean available, String pipeline) {
            this.id = id;
            this.load = load;
            this.available = available;
            this.pipeline = pipeline == null ? "" : pipeline;
        }

        public int id() {
            return id;
        }

        public double load() {
            return load;
        }

        /** Whether the agent may give this core to a pipeline at all. */
        public boolean available() {
            return available;
        }

        public String pipeline() {
            return pipeline;
        }

        /** Available and not used by any pipeline. */
        public boolean free() {
            return available && pipeline.isEmpty();
        }
    }

    /** One NIC: agent-local name, MAC, link state, how it dispatches tags to cores. */
    public static final class NicInfo {
        private final String name;
        private final String mac;
        private final boolean linkUp;
        private final int maxNicRules;
        private final NicDispatch dispatch;

        public NicInfo(String name, String mac, boolean linkUp, int maxNicRules, NicDispatch dispatch) {
            this.name = Objects.requireNonNull(name);
            this.mac = mac == null ? "" : mac;
            this.linkUp = linkUp;
            this.maxNicRules = maxNicRules;
            this.dispatch = Objects.requireNonNull(dispatch);
        }

        /** The dispatch mode the agent chose, what was asked, the probed capabilities and the refusals. */
        public NicDispatch dispatch() {
            return dispatch;
        }

        public String name() {
            return name;
        }

        public String mac() {
            return mac;
        }

        public boolean linkUp() {
            return linkUp;
        }

        /** 0 = the NIC has no rule table (tag dispatch then happens in software on the agent). */
        public int maxNicRules() {
            return maxNicRules;
        }
    }

    private final DeviceId id;
    private final String agent;
    private final boolean reachable;
    private final String error;
    private final List<CoreInfo> cores;
    private final List<NicInfo> nics;
    private final java.util.OptionalLong drainedSinceMs;

    public ServerInfo(DeviceId id, String agent, boolean reachable, String error, List<CoreInfo> cores,
                      List<NicInfo> nics) {
        this(id, agent, reachable, error, cores, nics, java.util.OptionalLong.empty());
    }

    /** @param drainedSinceMs when an operator drained it ({@link DrainService}); empty when it takes chains */
    public ServerInfo(DeviceId id, String agent, boolean reachable, String error, List<CoreInfo> cores,
                      List<NicInfo> nics, java.util.OptionalLong drainedSinceMs) {
        this.drainedSinceMs = Objects.requireNonNull(drainedSinceMs);
        this.id = Objects.requireNonNull(id);
        this.agent = Objects.requireNonNull(agent);
        this.reachable = reachable;
        this.error = error == null ? "" : error;
        this.cores = ImmutableList.copyOf(cores);
        this.nics = ImmutableList.copyOf(nics);
    }

    public DeviceId id() {
        return id;
    }

    /** Agent address "host:port". */
    public String agent() {
        return agent;
    }

    public boolean reachable() {
        return reachable;
    }

    /** Why the agent could not be queried; empty when reachable. */
    public String error() {
        return error;
    }

    public List<CoreInfo> cores() {
        return cores;
    }

    public List<NicInfo> nics() {
        return nics;
    }

    /** When an operator drained the server (ms since the epoch); empty when it takes chains. */
    public java.util.OptionalLong drainedSinceMs() {
        return drainedSinceMs;
    }

    /** Mean load of all cores (0 when none): the number power-of-two placement compares. */
    public double load() {
        return cores.stream().mapToDouble(CoreInfo::load).average().orElse(0);
    }

    public long freeCores() {
        return cores.stream().filter(CoreInfo::free).count();
    }
}
