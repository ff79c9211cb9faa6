package org.metron.app.impl;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import org.metron.app.spi.MetronServer;

import java.util.List;
import java.util.Set;

/** The server placement picked, with the NICs and cores it reserves and how many servers were asked. */
public final class ServerChoice {
    private final MetronServer server;
    private final String nic;
    private final String egressNic;
    private final List<Integer> cores;
    private final Set<Integer> tagsInUse;
    private final double load;
    private final int queried;
    private final boolean nicRules;

    ServerChoice(MetronServer server, String nic, String egressNic, List<Integer> cores, Set<Integer> tagsInUse,
                 double load, int queried, boolean nicRules) {
        this.server = server;
        this.nic = nic;
        this.egressNic = egressNic;
        this.cores = ImmutableList.copyOf(cores);
        this.tagsInUse = ImmutableSet.copyOf(tagsInUse);
        this.load = load;
        this.queried = queried;
        this.nicRules = nicRules;
    }

    public MetronServer server() {
        return server;
    }

    public String nic() {
        return nic;
    }

    public String egressNic() {
        return egressNic;
    }

    /** Free cores reserved for the chain, lowest ids first. */
    public List<Integer> cores() {
        return cores;
    }

    /** Group tags the agent reported in use. */
    public Set<Integer> tagsInUse() {
        return tagsInUse;
    }

    /** Mean core load the agent reported. */
    public double load() {
        return load;
    }

    /** Whether the ingress NIC has a rule table (else the agent dispatches tags in software). */
    public boolean nicRules() {
        return nicRules;
    }

    /** Servers whose load was queried to reach this decision. */
    public int queried() {
        return queried;
    }
}
