package org.metron.app.api;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Identifier of a service chain: the chain's {@code name} from its JSON. Also the pipeline id on the agents
 * and the leadership topic suffix, so it is restricted to characters every one of those accepts.
 */
public final class ChainId implements Comparable<ChainId> {
    private static final Pattern VALID = Pattern.compile(RequestRules.CHAIN_ID);

    private final String name;

    private ChainId(String name) {
        this.name = name;
    }

    /**
     * Returns the id for a chain name.
     *
     * @param name chain name: 1..64 of letters, digits, '_', '.', '-', starting with a letter or digit
     * @return chain id
     * @throws MetronException INVALID_CHAIN naming the bad name
     */
    public static ChainId of(String name) {
        if (name == null || !VALID.matcher(name).matches()) {
            throw new MetronException(MetronException.Fault.INVALID_CHAIN,
                    "chain name '" + name + "' must match " + VALID.pattern());
        }
        return new ChainId(name);
    }

    public String name() {
        return name;
    }

    @Override
    public int compareTo(ChainId o) {
        return name.compareTo(o.name);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof ChainId && ((ChainId) o).name.equals(name);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name);
    }

    @Override
    public String toString() {
        return name;
    }
}
