package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.api.DrainReport;
import org.metron.app.api.DrainReport.Move;
import org.metron.app.api.DrainService;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.MetronException;
import org.metron.app.api.MetronException.Fault;
import org.metron.app.api.Placement;
import org.metron.app.impl.ChainMoves;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.ChainStore;
import org.metron.app.store.DrainedServer;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * The one {@link DrainService} (docs/failover.md#planned-restart-drain), which both hosts run: the server's drained
 * record ({@link ChainStore#drained()}) is written first, so placement, scale-out and failover leave it out from
 * then on; then every group scaled out to it is merged back into its chain's server (a merge back: its flows come
 * along) and every chain whose server it is moves make-before-break to another ({@link ChainMoves}); a chain with
 * groups scaled out to other servers brings them home first, since its move carries the flow state of its own
 * server's groups. A drain that has nowhere to put what runs on the server is refused before anything is written.
 * Each move and merge runs on its chain's owner (the hosts give {@link ScalingService#move} and
 * {@link ScalingService#merge}, which ask the owner when it is another instance), so any instance drains a server.
 */
public final class ServerDrain implements DrainService {
    private static final Logger log = LoggerFactory.getLogger(ServerDrain.class);

    /** A merge back of a scaled-out group ({@link ScalingService#merge}: forwarded to the chain's owner). */
    @FunctionalInterface
    public interface Merges {
        ScalingEvent merge(ChainId chain, String keep, String retire);
    }

    private final ChainStore store;
    private final ServerRegistry servers;
    private final ChainMoves chains;
    private final Merges merges;
    private final LongSupplier clock;
    /** One drain or undrain at a time on this instance: each reads the placements it moves once. */
    private final Object lock = new Object();

    public ServerDrain(ChainStore store, ServerRegistry servers, ChainMoves chains, Merges merges, LongSupplier clock) {
        this.store = Objects.requireNonNull(store);
        this.servers = Objects.requireNonNull(servers);
        this.chains = Objects.requireNonNull(chains);
        this.merges = Objects.requireNonNull(merges);
        this.clock = Objects.requireNonNull(clock);
    }

    @Override
    public DrainReport drain(DeviceId server) {
        synchronized (lock) {
            registered(server);
            List<Placement> all = store.placements().snapshot().values().stream()
                    .sorted(Comparator.comparing(p -> p.chainId().toString())).collect(Collectors.toList());
            List<Placement> home = all.stream().filter(p -> p.server().equals(Optional.of(server)))
                    .collect(Collectors.toList());
            List<DeviceId> others = servers.servers().stream().map(MetronServer::id)
                    .filter(s -> !s.equals(server) && !store.isDrained(s)).collect(Collectors.toList());
            if (!home.isEmpty() && others.isEmpty()) {
                throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "server " + server + " not drained: chain(s) "
                        + home.stream().map(Placement::chainId).collect(Collectors.toList()) + " run on it and no "
                        + "other server could take them (" + (servers.servers().size() == 1 ? "it is the only "
                        + "server registered" : "every other server is drained: " + drainedIds()) + "); nothing "
                        + "was moved and the server takes chains as before");
            }
            DrainedServer was = store.drained().get(server).map(Versioned::value).orElse(null);
            long since = was == null ? clock.getAsLong() : was.sinceMs();
            List<ChainId> movedOff = new ArrayList<>(was == null ? List.of() : was.movedOff());
            store.drained().put(server, new DrainedServer(since, movedOff));
            log.info("Server {} drained: nothing is placed on it; moving {} chain(s) and the groups scaled out to it",
                    server, home.size());
            List<Move> moves = new ArrayList<>();
            String doing = "";
            try {
                for (Placement p : all) {
                    if (!p.server().equals(Optional.of(server))) {
                        for (GroupAssignment g : remoteOn(p, Optional.of(server))) {
                            doing = "group " + g.groupId() + " of chain " + p.chainId();
                            moves.add(mergeBack(p, g));
                        }
                    }
                }
                for (Placement p : home) {
                    ChainId id = p.chainId();
                    for (GroupAssignment g : remoteOn(p, Optional.empty())) {
                        doing = "group " + g.groupId() + " of chain " + id + " (brought home before the chain moves)";
                        moves.add(mergeBack(p, g));
                    }
                    doing = "chain " + id;
                    moves.add(chains.move(id, Optional.empty(), "moved off drained server " + server));
                    movedOff.add(id);
                    store.drained().put(server, new DrainedServer(since, movedOff));
                }
            } catch (MetronException e) {
                throw new MetronException(e.fault(), "server " + server + " drained only in part: moving " + doing
                        + " failed: " + e.getMessage() + "; it runs on " + server + " untouched"
                        + (moves.isEmpty() ? "" : "; moved before it (they stay moved): " + moves) + "; the server "
                        + "stays drained (nothing new goes to it): drain it again, or undrain it with moveBack", e);
            } catch (ScalingRequests.Pending p) {
                throw new ScalingRequests.Pending(p.request(), "server " + server + " drained only in part: moving "
                        + doing + ": " + p.getMessage() + (moves.isEmpty() ? "" : "; moved before it: " + moves)
                        + "; the server stays drained: drain it again once it has moved to see the rest moved");
            }
            log.info("Server {} drained: {}", server, moves);
            return new DrainReport(server, true, moves);
        }
    }

    @Override
    public DrainReport undrain(DeviceId server, boolean moveBack) {
        synchronized (lock) {
            registered(server);
            DrainedServer was = store.drained().get(server).map(Versioned::value).orElseThrow(() ->
                    new MetronException(Fault.INVALID_REQUEST, "server " + server + " is not drained"));
            store.drained().remove(server);
            List<Move> moves = new ArrayList<>();
            for (ChainId id : moveBack ? was.movedOff() : List.<ChainId>of()) {
                Optional<DeviceId> now = store.placement(id).flatMap(Placement::server);
                if (now.isEmpty() || now.get().equals(server)) {
                    continue; // deleted, failed, or back already
                }
                try {
                    moves.add(chains.move(id, Optional.of(server), "moved back to undrained server " + server));
                } catch (MetronException e) {
                    throw new MetronException(e.fault(), "server " + server + " undrained (it takes chains again), "
                            + "but chain " + id + " not moved back: " + e.getMessage() + "; it runs on " + now.get()
                            + (moves.isEmpty() ? "" : "; moved back before it: " + moves), e);
                } catch (ScalingRequests.Pending p) {
                    throw new ScalingRequests.Pending(p.request(), "server " + server + " undrained (it takes chains "
                            + "again); moving chain " + id + " back: " + p.getMessage()
                            + (moves.isEmpty() ? "" : "; moved back before it: " + moves));
                }
            }
            log.info("Server {} undrained{}", server, moves.isEmpty() ? "" : ": moved back " + moves);
            return new DrainReport(server, false, moves);
        }
    }

    @Override
    public Map<DeviceId, Long> drained() {
        Map<DeviceId, Long> out = new LinkedHashMap<>();
        store.drained().snapshot().forEach((k, v) -> out.put(k, v.sinceMs()));
        return out;
    }

    private void registered(DeviceId server) {
        if (servers.server(server).isEmpty()) {
            throw new MetronException(Fault.INVALID_REQUEST, "no server " + server + " is registered (servers: "
                    + servers.servers().stream().map(MetronServer::id).collect(Collectors.toList()) + ")");
        }
    }

    private List<DeviceId> drainedIds() {
        return new ArrayList<>(store.drained().snapshot().keySet());
    }

    /** The chain's groups scaled out to {@code on} (to any other server when empty), latest first. */
    private static List<GroupAssignment> remoteOn(Placement p, Optional<DeviceId> on) {
        List<GroupAssignment> out = p.groups().stream().filter(g -> g.remote()
                && (on.isEmpty() || g.server().equals(on))).collect(Collectors.toCollection(ArrayList::new));
        // the last split first: a slice of a slice joins its sibling before that joins the group it came from
        java.util.Collections.reverse(out);
        return out;
    }

    /**
     * Merges a scaled-out group back into the chain's own server: into the group there holding part of a class it
     * holds (the one it was split from), else the first group there.
     */
    private Move mergeBack(Placement p, GroupAssignment g) {
        Placement now = store.placement(p.chainId()).orElse(p);
        List<GroupAssignment> local = now.localGroups();
        GroupAssignment keep = local.stream().filter(a -> a.classIds().stream().anyMatch(g.classIds()::contains))
                .findFirst().orElse(local.isEmpty() ? null : local.get(0));
        if (keep == null) {
            throw new MetronException(Fault.IMPOSSIBLE_PLACEMENT, "chain " + p.chainId() + " has no group on its "
                    + "own server to take group " + g.groupId() + " back");
        }
        ScalingEvent e = merges.merge(p.chainId(), keep.groupId(), g.groupId());
        if (e.outcome() != ScalingEvent.Outcome.DONE) {
            throw new MetronException(Fault.AGENT_FAILURE, "merging " + g.groupId() + " back into " + keep.groupId()
                    + ": " + e.outcome() + " " + e.detail());
        }
        return new Move(p.chainId(), "group " + g.groupId() + " (merged into " + keep.groupId() + ")",
                g.server().orElseThrow(), now.server().orElseThrow(), e.detail());
    }
}
