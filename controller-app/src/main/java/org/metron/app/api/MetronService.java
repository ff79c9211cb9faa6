package org.metron.app.api;

import org.onosproject.net.DeviceId;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * What Metron offers operators. REST resources, CLI commands and the GUI are thin shells over this interface;
 * it is implemented once, by {@code org.metron.app.impl.ChainManager}.
 *
 * <p>Guarantees of every mutating method: it either completes or throws {@link MetronException}; on a throw,
 * every other chain, its placement, tags and installed rules are exactly as before, and the chain concerned is
 * either absent (submit) or left with its previous definition (update) or in FAILED with the reason.
 */
public interface MetronService {

    /**
     * Accepts a chain (docs/contracts.md chain JSON, or the original Metron netcfg format), synthesizes, places
     * and deploys it.
     *
     * @param json chain JSON with NF configs inline
     * @return the chain, ACTIVE when the agent confirmed the pipeline running
     * @throws MetronException INVALID_JSON, INVALID_CHAIN, DUPLICATE_CHAIN, IMPOSSIBLE_PLACEMENT,
     *                         AGENT_FAILURE, SWITCH_FAILURE; on failure nothing is kept
     */
    Chain submit(String json);

    /**
     * Replaces a chain's definition: the new one is synthesized, placed and deployed, then the old one removed.
     *
     * @throws MetronException as {@link #submit}, or UNKNOWN_CHAIN; on failure the old chain keeps running
     */
    Chain update(ChainId id, String json);

    /**
     * Removes a chain and releases everything it holds.
     *
     * @throws MetronException UNKNOWN_CHAIN
     */
    void remove(ChainId id);

    /**
     * Dry run: parses, synthesizes and computes a placement without reserving or installing anything.
     *
     * @throws MetronException INVALID_JSON or INVALID_CHAIN (placement problems are reported in the answer)
     */
    ValidationReport validate(String json);

    Collection<Chain> chains();

    Optional<Chain> chain(ChainId id);

    /**
     * Traffic classes of a chain in first-match order.
     *
     * @throws MetronException UNKNOWN_CHAIN
     */
    List<TrafficClassInfo> trafficClasses(ChainId id);

    Collection<Placement> placements();

    Optional<Placement> placement(ChainId id);

    Collection<TagAllocation> tags();

    /** Every known server, each queried once for resources and load. */
    List<ServerInfo> servers();

    /** Rules Metron installed on a device (all devices when null), with counters. */
    List<RuleInfo> rules(DeviceId device);
}
