package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.spi.Leadership;
import org.metron.app.api.PendingPart;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledState;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Objects;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Moves the chains this instance owns off a server that is gone ({@link ChainManager#serverLost}): each to another
 * server when one can take it, else DEGRADED naming what does not run (the pending parts of a DEGRADED chain). A
 * chain readied elsewhere while the failover deadline ran ({@link FailoverPreparation}) moves with what was readied;
 * one that was not is placed and deployed from scratch here.
 */
final class LostServer {
    private static final Logger log = LoggerFactory.getLogger(LostServer.class);

    private final ChainBringUp bringUps;
    private final ChainTeardown teardown;
    private final ChainStore store;
    private final Leadership leadership;
    private final PlacementEngine placement;
    private final Deployer deployer;
    private final ChainCompilers compilers;
    private final FailoverPreparation readied;
    private volatile ServerLoss scaledOut = ServerLoss.NONE;

    LostServer(ChainBringUp bringUps, ChainTeardown teardown, ChainStore store, Leadership leadership,
               PlacementEngine placement, Deployer deployer, ChainCompilers compilers, FailoverPreparation readied) {
        this.bringUps = Objects.requireNonNull(bringUps);
        this.teardown = Objects.requireNonNull(teardown);
        this.store = Objects.requireNonNull(store);
        this.leadership = Objects.requireNonNull(leadership);
        this.placement = Objects.requireNonNull(placement);
        this.deployer = Objects.requireNonNull(deployer);
        this.compilers = Objects.requireNonNull(compilers);
        this.readied = Objects.requireNonNull(readied);
    }

    /** {@code server}'s agent stopped answering: its chains are readied elsewhere ({@link FailoverPreparation}). */
    void suspect(DeviceId server) {
        readied.suspect(server);
    }

    /** {@code server} answers again: what was readied for its chains is taken back. */
    void back(DeviceId server) {
        readied.back(server);
    }

    /** Waits until the readying (or taking back) asked for {@code server} has run. */
    void settle(DeviceId server) {
        readied.settle(server);
    }

    /** What was readied for {@code id} is taken back (it is deleted); caller holds the chain's lock. */
    void discardPrepared(ChainId id, String why) {
        readied.discard(id, why);
    }

    /** {@link FailoverPreparation#takeBackLeft}; caller holds the chain's lock. */
    boolean takeBackLeft(ChainId id) {
        return readied.takeBackLeft(id);
    }

    /** {@link FailoverPreparation#notHeld}. */
    Set<ChainId> notHeld() {
        return readied.notHeld();
    }

    /**
     * What else acts on a lost server: scaling brings back the groups it scaled out to it ({@link ServerLoss});
     * {@link ServerLoss#NONE} by default.
     */
    void onServerLost(ServerLoss scaled) {
        scaledOut = Objects.requireNonNull(scaled);
    }

    /**
     * Moves every chain this instance leads off a server that is gone (its device stayed unavailable past the
     * failover deadline, see the ONOS component): the chain's switch rules come off, its placement and tags are
     * released, and it is placed and deployed again from its stored definition among the servers still available.
     * Its reason then says it moved and from where. A chain no other server can take is left as it is (rules,
     * tags, cores: it comes back if its agent does), its reason naming the lost server and why nothing else can
     * take it; one that cannot be brought up elsewhere after all ends FAILED saying so. Flow state does not move
     * (the agent holding it is gone). First, the chains placed on other servers that had groups scaled out to it
     * get those back on their own servers ({@link ChainManager#onServerLost}: scaling does it).
     *
     * @return the chains that run again on another server
     */
    List<ChainId> serverLost(DeviceId server) {
        long found = System.nanoTime();
        readied.settle(server); // what the deadline readied is used, not raced
        long tSettled = System.nanoTime();
        // the chains readied elsewhere move first, before any whole map is read (each such read a Raft round in a
        // cluster: the scaled-out groups' and this loop's placement snapshots held the readied move up by 150 ms
        // in the 3-node Karaf test); their cores are held by their records, so nothing below can take them
        List<ChainId> moved = new ArrayList<>();
        Set<ChainId> handled = new HashSet<>();
        for (ChainId id : readied.readiedOff(server)) {
            handled.add(id);
            if (moveOffLocked(id, server, found)) {
                moved.add(id);
            }
        }
        long tReadied = System.nanoTime();
        try {
            List<ChainId> back = scaledOut.serverLost(server);
            if (!back.isEmpty()) {
                log.warn("Chains {}: their groups on lost server {} run on their own servers again", back, server);
            }
        } catch (RuntimeException e) {
            log.warn("Bringing back the groups scaled out to lost server {} failed: {}", server, e.toString());
        }
        log.info("Lost server {}: waited {} ms for what was readied, its {} readied chains handled in {} ms, its "
                        + "scaled-out groups in {} ms", server, ChainBringUp.ms(found, tSettled), handled.size(),
                ChainBringUp.ms(tSettled, tReadied), ChainBringUp.ms(tReadied, System.nanoTime()));
        for (Placement p : store.placements().snapshot().values()) {
            if (p.server().map(server::equals).orElse(false) && !handled.contains(p.chainId())
                    && moveOffLocked(p.chainId(), server, found)) {
                moved.add(p.chainId());
            }
        }
        readied.discardFrom(server, "not used: the chain left " + server + " otherwise or was deleted");
        return moved;
    }

    /** {@link #moveOff} under the chain's lock and fence, if this instance acts for the chain. */
    private boolean moveOffLocked(ChainId id, DeviceId server, long found) {
        synchronized (store.lockFor(id)) {
            try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                return leadership.actsFor(id) && moveOff(id, server, found);
            }
        }
    }

    /**
     * {@link #serverLost} for one chain, caller holding its lock: moved to another server, or DEGRADED naming what
     * does not run when no other server can take it (nothing torn down: it comes back if its agent does), or
     * FAILED when another server was chosen but the chain could not be brought up there. A chain marked for
     * removal, or no longer placed on {@code server}, is left alone.
     *
     * @return whether the chain now runs on another server
     */
    boolean moveOff(ChainId id, DeviceId server) {
        return moveOff(id, server, System.nanoTime());
    }

    /** {@link #moveOff(ChainId, DeviceId)}, the loss handled since {@code found} (nanoTime, for the log). */
    private boolean moveOff(ChainId id, DeviceId server, long found) {
        // the three records at once (each a Raft read in a cluster); the installed rules are used only once the
        // chain runs elsewhere (its old rules come off then), but must be read before the move rewrites them
        CompletableFuture<Optional<Placement>> placed = readied.read(() -> store.placements().get(id)
                .map(Versioned::value));
        CompletableFuture<Optional<InstalledState>> installed = readied.read(() -> store.installed().get(id)
                .map(Versioned::value));
        Optional<Versioned<Chain>> chain = store.chains().get(id);
        Optional<Placement> now = placed.join();
        boolean stillThere = now.flatMap(Placement::server).map(server::equals).orElse(false);
        if (chain.isEmpty() || !stillThere || chain.get().value().markedForRemoval()) {
            readied.discard(id, "the chain is deleted or left " + server); // a deleted chain is never placed
            return false;
        }
        Chain c = chain.get().value();
        if (readied.moveReadied(chain.get(), server, now.get(), installed, found).isPresent()) {
            return true;
        }
        String why = "server " + server + " became unavailable";
        long t0 = System.nanoTime();
        ChainCompiler compiler = compilers.of(c);
        // nothing is torn down unless another server can take the chain: with none, the chain stays placed
        // (its rules, tags and cores) and comes back when its agent does (restart recovery). The lost server is
        // not asked (a dead agent would cost a timeout per question)
        PlacementEngine others = placement.without(server);
        try {
            others.chooseServer(id, c.deployment(), c.deployment().cpuCores(), bringUps::reservedCores,
                    compiler.flowStateDemand());
        } catch (MetronException e) {
            List<org.metron.app.api.PendingPart> down = notRunning(store, id, server);
            store.chains().put(id, c.withState(ChainState.DEGRADED, why + "; no other server can take the chain ("
                    + e.getMessage() + "): its traffic does not flow until the agent of " + server
                    + " answers again", down));
            log.warn("Chain {} DEGRADED: its server {} is lost and no other server can take it ({}); not running: "
                    + "{}", id, server, e.getMessage(), down);
            return false;
        }
        long tChecked = System.nanoTime();
        // the old placement's switch rules come off after the new placement is up, those it does not take over
        // (same table entry): until then they only led to the lost server, and removing them first held the new
        // placement up (582 of a 1881 ms move in the 3-node Karaf test)
        Optional<InstalledState> old = installed.join().map(teardown::withoutShared);
        teardown.releasePlacement(id);
        long tReleased = System.nanoTime();
        try {
            Chain up = bringUps.bringUp(c.withState(ChainState.SUBMITTED, why), compiler, others);
            long tUp = System.nanoTime();
            Set<Object> kept = store.installed().get(id).map(Versioned::value).map(st -> Deployer.entries(st.switchRules()))
                    .orElse(Set.of());
            old.ifPresent(st -> removeOldRules(id, server, st, kept));
            long tOff = System.nanoTime();
            String to = store.placements().get(id).map(Versioned::value).flatMap(Placement::server).map(Object::toString)
                    .orElse("the offload device alone");
            store.chains().put(id, up.withState(up.state(), "moved off " + server + " (unavailable) to " + to));
            // where a failover's time goes after the deadline (agent death -> ACTIVE elsewhere is measured outside)
            log.warn("Chain {} moved off lost server {} to {}: {} in {} ms (another server checked {}, placement "
                    + "released {}, brought up {}; old rules off after {})", id, server, to, up.state(),
                    ChainBringUp.ms(t0, tUp), ChainBringUp.ms(t0, tChecked), ChainBringUp.ms(tChecked, tReleased),
                    ChainBringUp.ms(tReleased, tUp), ChainBringUp.ms(tUp, tOff));
            return true;
        } catch (MetronException e) {
            old.ifPresent(st -> removeOldRules(id, server, st, Set.of()));
            store.chains().put(id, c.withState(ChainState.FAILED, why + "; no other server could take the "
                    + "chain: " + e.getMessage()));
            log.warn("Chain {} FAILED with its lost server {}: {}", id, server, e.getMessage());
            return false;
        }
    }

    private void removeOldRules(ChainId id, DeviceId server, InstalledState old, Set<Object> kept) {
        List<String> left = deployer.removeStale(old, kept);
        if (!left.isEmpty()) {
            log.warn("Chain {}: rules of its placement on lost server {} not removed: {}", id, server, left);
        }
    }

    /** What a reroute installs: the offload choice, the placement it leads to and its switch rules. */

    /** The chain's pipeline and NIC rules on {@code server}, as pending parts (its groups when none is recorded). */
    static List<PendingPart> notRunning(ChainStore store, ChainId id, DeviceId server) {
        String why = "server " + server + " unavailable";
        List<PendingPart> out = new ArrayList<>();
        store.installed().get(id).map(Versioned::value).filter(st -> st.server().equals(Optional.of(server)))
                .ifPresent(st -> {
                    if (st.pipeline()) {
                        out.add(new PendingPart(server, "pipeline " + id, why));
                    }
                    if (!st.nicRuleIds().isEmpty()) {
                        out.add(new PendingPart(server, "NIC rules " + st.nicRuleIds(), why));
                    }
                });
        if (out.isEmpty()) {
            out.add(new PendingPart(server, "the chain's groups", why));
        }
        return out;
    }
}
