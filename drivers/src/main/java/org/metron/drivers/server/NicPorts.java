package org.metron.drivers.server;

import com.google.common.collect.ImmutableBiMap;
import org.metron.agent.v1.Nic;
import org.metron.agent.v1.ServerResources;
import org.onosproject.net.PortNumber;

import java.util.Optional;

/**
 * How a server's NICs appear as ONOS ports: the agent's i-th NIC is port i+1, named after the NIC.
 * The one place that numbering is decided; descriptions, statistics and NIC rules all go through it.
 */
public final class NicPorts {

    private final ImmutableBiMap<String, Long> numbers;

    private NicPorts(ImmutableBiMap<String, Long> numbers) {
        this.numbers = numbers;
    }

    public static NicPorts of(ServerResources resources) {
        ImmutableBiMap.Builder<String, Long> b = ImmutableBiMap.builder();
        long n = 1;
        for (Nic nic : resources.getNicsList()) {
            b.put(nic.getName(), n++);
        }
        return new NicPorts(b.build());
    }

    /** The port of a NIC, carrying the NIC's name; empty when the server has no such NIC. */
    public Optional<PortNumber> port(String nic) {
        Long n = numbers.get(nic);
        return n == null ? Optional.empty() : Optional.of(PortNumber.portNumber(n, nic));
    }

    /** The NIC behind a port: by number (names are informational in ONOS port numbers). */
    public Optional<String> nic(PortNumber port) {
        return Optional.ofNullable(numbers.inverse().get(port.toLong()));
    }

    public int size() {
        return numbers.size();
    }
}
