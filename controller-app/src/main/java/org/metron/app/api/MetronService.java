package org.metron.app.api;

import org.metron.drivers.provider.ServerConfigErrors;
import org.onosproject.net.DeviceId;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * What Metron offers operators. REST resources, CLI commands and the GUI are thin shells over this interface;
 * it is implemented once, by {@code org.metron.app.impl.ChainManager}.
 *
 * <p>Guarantees of every mutating method: it either completes or throws {@link MetronException}; on a throw,
 * every other chain, its placement, tags and installed rules are exactly as before. For the chain concerned:
 * bad input (INVALID_JSON, INVALID_CHAIN) stores nothing; a failure after acceptance (placement, agent,
 * switch) rolls back everything it installed and records the chain as FAILED with the reason, holding no
 * resources, so operators can see why and submit it again.
 */
public interface MetronService {

    /**
     * Accepts a chain (docs/contracts.md chain JSON, or the original Metron netcfg format), synthesizes, places
     * and deploys it.
     *
     * @param json chain JSON with NF configs inline
     * @return the chain, ACTIVE when the agent confirmed the pipeline running
     * @throws MetronException INVALID_JSON, INVALID_CHAIN, DUPLICATE_CHAIN (an existing chain that is not
     *                         FAILED), IMPOSSIBLE_PLACEMENT, AGENT_FAILURE, SWITCH_FAILURE, NOT_LEADER
     */
    Chain submit(String json);

    /**
     * Replaces a chain's definition make-before-break (docs/updates.md): the new version is validated, placed and
     * deployed beside the running one, takes the flow state of its unchanged stateful elements, traffic moves to it
     * at the switches, then the old version is removed. When the new version cannot be placed or deployed, the
     * running version (its record included) is untouched. A chain that holds nothing (FAILED) is brought up with
     * the new definition, the old one restored if that fails. Any instance takes it: the new definition is
     * recorded with the chain ({@link Chain#update()}) and the chain's owner applies it; an instance that does not
     * own the chain waits for that and answers the chain (its update still PENDING when the wait ended) or the
     * owner's error.
     *
     * @throws MetronException as {@link #submit}, or UNKNOWN_CHAIN, BEING_REMOVED
     */
    Chain update(ChainId id, String json);

    /**
     * Removes a chain and releases everything it holds. The delete is recorded first (the chain REMOVING) and never
     * undone; what cannot be removed now (a dead agent, an unreachable switch) is removed when its device answers
     * again, and the chain goes once nothing of it is left. A chain already REMOVING is tried again.
     *
     * @return empty when the chain is gone; else the chain, REMOVING, whose pending parts name what is left
     * @throws MetronException UNKNOWN_CHAIN
     */
    Optional<Chain> remove(ChainId id);

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

    /**
     * The placements readied on spare servers for failover moves while a lost server's deadline runs, by any
     * controller instance: their cores and tags are held until the move records the chain's placement or the move
     * is taken back (the server answered again, the chain was deleted, or its owner stopped and the next one took it
     * back).
     */
    Collection<Placement> readied();

    Collection<TagAllocation> tags();

    /** Every known server, each queried once for resources and load. */
    List<ServerInfo> servers();

    /** Server configuration entries refused by the host (ONOS's netcfg), oldest first. */
    List<ServerConfigErrors.Refused> refusedServerConfigs();

    /** Rules Metron installed on a device (all devices when null), with counters. */
    List<RuleInfo> rules(DeviceId device);
}
