package org.metron.app.impl;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.MetronException;
import org.metron.app.api.Placement;
import org.metron.app.api.Tag;
import org.metron.app.api.TagAllocation;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronServer;
import org.metron.app.spi.ServerRegistry;
import org.metron.app.store.BackupConfiguration;
import org.metron.app.store.ChainStore;
import org.metron.app.store.InstalledState;
import org.metron.app.store.PreparedMoveRecord;
import org.metron.drivers.agent.AgentClient;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/**
 * A lost server's chains readied elsewhere while its failover deadline runs, and moved with what was readied when
 * it passes ({@link LostServer}). Suspected (its agent stopped answering): each chain this instance owns there,
 * not marked for removal, gets a {@link PreparedMove} on another server (chosen and recorded in the store, tags
 * claimed, pipeline up, switch rules planned; traffic untouched). Back within the deadline: what was readied is
 * taken back (the pipeline removed from the spare, tags released, the record removed) and the chain stays where it
 * is, restart recovery restoring what its agent lost. Deadline passed: the move installs the new switch rules (new
 * before old: the old ones go after) and records the chain's placement, installed rules, state and backups in one
 * round of concurrent store writes; the old rules, tags and armed backups are taken out after that, behind the
 * traffic.
 *
 * <p>An owner that stops during the deadline leaves its record: the instance that comes to own the chain finds a
 * move it does not hold ({@link #takeBackLeft}, on taking the chain over, before it readies or moves the chain
 * itself, and on its ownership sweeps while the record stays) and takes back what the record names, the same way
 * an owner takes back its own ({@link #takeBack}); the chain is then moved from scratch if its server is still
 * lost. One path, whoever readied the move.
 */
final class FailoverPreparation {
    private static final Logger log = LoggerFactory.getLogger(FailoverPreparation.class);

    private final ChainManager chains;
    private final ChainStore store;
    private final Leadership leadership;
    private final PlacementEngine placement;
    private final PreparedMoves moves;
    private final ChainBringUp bringUps;
    private final ChainTeardown teardown;
    private final ServerRegistry servers;
    private final TagAllocator tags;
    private final Deployer deployer;
    private final ChainCompilers compilers;
    private final Duration timeout;

    FailoverPreparation(ChainManager chains, ChainStore store, Leadership leadership, PlacementEngine placement,
                        PreparedMoves moves, ChainBringUp bringUps, ChainTeardown teardown, ServerRegistry servers,
                        TagAllocator tags, Deployer deployer, ChainCompilers compilers, Duration timeout) {
        this.chains = Objects.requireNonNull(chains);
        this.store = Objects.requireNonNull(store);
        this.leadership = Objects.requireNonNull(leadership);
        this.placement = Objects.requireNonNull(placement);
        this.moves = Objects.requireNonNull(moves);
        this.bringUps = Objects.requireNonNull(bringUps);
        this.teardown = Objects.requireNonNull(teardown);
        this.servers = Objects.requireNonNull(servers);
        this.tags = Objects.requireNonNull(tags);
        this.deployer = Objects.requireNonNull(deployer);
        this.compilers = Objects.requireNonNull(compilers);
        this.timeout = Objects.requireNonNull(timeout);
    }

    /** {@code server} stopped answering: its chains are readied elsewhere, on the preparation's own thread. */
    void suspect(DeviceId server) {
        moves.suspect(server);
        moves.submit(server, () -> prepareAll(server));
    }

    /** {@code server} answers again: what was readied for its chains is taken back (on the same thread). */
    void back(DeviceId server) {
        if (!moves.suspected(server) && moves.movesFrom(server).isEmpty()) {
            return; // the common case: a server that was never suspected
        }
        moves.cleared(server);
        moves.submit(server, () -> discardFrom(server, "server " + server + " answers again: the chain stays"));
    }

    /** Waits until {@code server}'s preparation has ended (the move uses what it readied). */
    void settle(DeviceId server) {
        moves.settle(server, timeout.multipliedBy(2));
    }

    /** {@link PreparedMoves#read}. */
    <T> java.util.concurrent.CompletableFuture<T> read(java.util.function.Supplier<T> what) {
        return moves.read(what);
    }

    /**
     * Takes back what was readied for {@code id} (the chain is deleted, say), by this instance or by an owner that
     * stopped; caller owns the chain and holds its lock.
     */
    void discard(ChainId id, String why) {
        Optional<PreparedMove> m = moves.take(id);
        if (m.isPresent()) {
            discard(m.get(), why);
        } else {
            moves.recorded(id).ifPresent(r -> takeBack(r, why + " (readied by an owner that stopped)", true));
        }
    }

    /**
     * Takes back what an owner that stopped readied for {@code id} and left recorded, if anything: this instance
     * came to own the chain (or restarted) and does not hold the move. Caller owns the chain and holds its lock.
     *
     * @return whether no such record is left (one the spare's agent could not clear stays, tried again later)
     */
    boolean takeBackLeft(ChainId id) {
        if (moves.holds(id)) {
            return true;
        }
        Optional<PreparedMoveRecord> r = moves.recorded(id);
        r.ifPresent(x -> takeBack(x, "readied by an owner that stopped", true));
        return r.isEmpty() || moves.recorded(id).isEmpty();
    }

    /** The chains whose recorded move this instance does not hold (another owner's, or left by one that stopped). */
    Set<ChainId> notHeld() {
        return moves.notHeld();
    }

    /** Takes back what this instance readied in {@code m}, once the spare's agent has answered for it. */
    private void discard(PreparedMove m, String why) {
        moves.forget(m);
        try {
            m.start().ready(); // its calls end either way: what they did is removed below, as the record names it
        } catch (MetronException e) {
            log.debug("Chain {}: the readied start on {} had failed anyway: {}", m.id(), m.to(), e.getMessage());
        }
        takeBack(m.record(), why, false);
    }

    /**
     * Takes back what the record {@code r} names: the pipeline and NIC rules on the spare (those still there), the
     * tags claimed there, then the record (its cores free again). The chain itself is untouched: it never moved. A
     * record whose move the chain's placement already records (its owner stopped after the move's writes) goes
     * alone; the agent's part is left when the chain runs something on the spare now (its pipeline is named after the
     * chain). What the agent could not remove keeps the record, for the chain's owner to try again. Caller owns the
     * chain and holds its lock.
     *
     * @param left whether another owner readied it (it may have committed the move's switch rules before it stopped:
     *             those the chain's installed record does not name are removed too; this instance's own moves
     *             commit nothing before their records are written)
     */
    private void takeBack(PreparedMoveRecord r, String why, boolean left) {
        ChainId id = r.chainId();
        Optional<Placement> now = store.placement(id);
        if (now.equals(Optional.of(r.placement()))) {
            moves.release(id);
            log.info("Chain {}: the move readied on {} is recorded as its placement: only its record goes", id,
                    r.to());
            return;
        }
        boolean onSpare = now.map(p -> p.server().equals(Optional.of(r.to())) || p.groups().stream()
                .anyMatch(g -> g.server().equals(Optional.of(r.to())))).orElse(false);
        List<String> failed = new ArrayList<>(onSpare ? List.of() : removeFromSpare(r));
        if (left && !onSpare && !r.switchRules().isEmpty()) {
            failed.addAll(removeSwitchRules(r));
        }
        if (!failed.isEmpty()) {
            log.warn("Chain {}: its move readied on {} not taken back ({}): {}; its record stays, tried again", id,
                    r.to(), why, failed);
            return;
        }
        // the claims of the readied placement only: a tag is the chain's on one server at a time
        List<Tag> claims = onSpare ? List.of() : tags.allocations().stream().filter(a -> a.chainId().equals(id)
                && a.server().equals(r.to()) && r.tags().contains(a.tag())).map(TagAllocation::tag)
                .collect(Collectors.toList());
        tags.release(id, claims);
        moves.release(id);
        log.info("Chain {}: its move readied on {} taken back ({}): pipeline and NIC rules {}, tags {} released", id,
                r.to(), why, onSpare ? "left (the chain runs there now)" : "removed", claims);
    }

    /**
     * Removes the switch rules the move {@code r} was to commit whose entries the chain's installed record does not
     * hold (those it does are the chain's own, whatever their actions now: its next move or removal takes them);
     * removing a rule never committed changes nothing. Answers what could not be removed.
     */
    private List<String> removeSwitchRules(PreparedMoveRecord r) {
        Set<Object> chainsOwn = store.installed().get(r.chainId()).map(Versioned::value)
                .map(st -> Deployer.entries(st.switchRules())).orElse(Set.of());
        return deployer.removeStale(new InstalledState(r.chainId(), Optional.of(r.to()), r.switchRules(), List.of(),
                false), chainsOwn);
    }

    /** Removes the readied pipeline and NIC rules from the spare's agent, those still there; answers what is left. */
    private List<String> removeFromSpare(PreparedMoveRecord r) {
        Optional<MetronServer> spare = servers.server(r.to());
        if (spare.isEmpty()) {
            return List.of("server " + r.to() + " not registered");
        }
        AgentClient agent = spare.get().agent();
        List<String> left = new ArrayList<>();
        try {
            deployer.calls().await(AgentCalls.removePipelinePresent(agent, r.chainId().name()), "removing pipeline "
                    + r.chainId() + " from agent " + agent.target());
        } catch (MetronException e) {
            left.add(e.getMessage());
        }
        if (!r.nicRuleIds().isEmpty()) {
            try {
                deployer.calls().await(AgentCalls.removeNicRulesPresent(agent, r.nicRuleIds()), "removing NIC rules "
                        + r.nicRuleIds() + " from agent " + agent.target());
            } catch (MetronException e) {
                left.add(e.getMessage());
            }
        }
        return left;
    }

    /** The chains this instance holds a move readied for off {@code server}. */
    List<ChainId> readiedOff(DeviceId server) {
        return moves.movesFrom(server).stream().map(PreparedMove::id).collect(Collectors.toList());
    }

    /** Takes back what was readied off {@code server} and not used (the chain changed meanwhile). */
    void discardFrom(DeviceId server, String why) {
        for (PreparedMove m : moves.movesFrom(server)) {
            synchronized (store.lockFor(m.id())) {
                try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), m.id())) {
                    discard(m.id(), why);
                }
            }
        }
    }

    private void prepareAll(DeviceId server) {
        // a dead agent would cost a timeout per question: no suspected server is asked (two servers lost together
        // each asked the other's dead agent: in FailoverDeadlineTest a chain was readied 3.2-3.7 s after its lock
        // was free, now 0.03-0.8 s)
        PlacementEngine others = placement.without(moves::suspected);
        for (Placement p : store.placements().snapshot().values()) {
            if (!p.server().map(server::equals).orElse(false)) {
                continue;
            }
            ChainId id = p.chainId();
            synchronized (store.lockFor(id)) {
                try (ChainFence.Op fence = ChainFence.begin(leadership, store.terms(), id)) {
                    if (moves.suspected(server) && leadership.actsFor(id)) {
                        prepareOne(id, p, server, others);
                    }
                }
            }
        }
    }

    /**
     * Readies one chain placed ({@code seen}, read in the snapshot: the move checks the chain still has it) on
     * {@code server}; caller holds its lock.
     */
    private void prepareOne(ChainId id, Placement seen, DeviceId server, PlacementEngine others) {
        // the chain and its placement read beside the record of a move left by an owner that stopped (one Raft round
        // instead of three one after the other in a cluster, while the deadline runs: at load 14 the 3-node Karaf
        // test readied the move 1.8 s after the device went unavailable, past the 1.5 s deadline); taking such a
        // move back writes neither
        CompletableFuture<Optional<Chain>> read = moves.read(() -> store.chains().get(id).map(Versioned::value));
        CompletableFuture<Optional<Placement>> placed = moves.read(() -> store.placement(id));
        if (!takeBackLeft(id)) {
            return; // an owner that stopped readied it and what it left is still there: nothing readied over it
        }
        Optional<Chain> chain = read.join();
        // a deleted chain (REMOVING) is never readied, nor one readied already, nor one that left the server since
        // the snapshot (its owner moved it meanwhile: its pipeline and NIC rules on a spare are the chain's own)
        if (chain.isEmpty() || chain.get().markedForRemoval() || moves.movesFrom(server).stream()
                .anyMatch(m -> m.id().equals(id)) || !placed.join().equals(Optional.of(seen))) {
            return;
        }
        Chain c = chain.get();
        try {
            PreparedMove m = bringUps.prepareMove(c, compilers.of(c), others, seen, server, moves::hold);
            moves.keep(m);
            if (!moves.suspected(server)) {
                discard(m, "server " + server + " answered again while it was readied");
            }
        } catch (MetronException e) {
            moves.release(id);
            log.info("Chain {}: no move off {} readied ({}); decided when the failover deadline passes", id,
                    server, e.getMessage());
        }
    }

    /**
     * Moves {@code read} (the chain as read, with its version) off {@code server} with what was readied for it,
     * caller holding its lock and having checked that the chain is not marked for removal and still placed
     * ({@code now}) on {@code server}. {@code installed}, the chain's installed rules being read, is waited for only
     * once the switch rules are in, before the move's records overwrite it (its old rules come off after those).
     *
     * @return the chain as recorded, or empty when nothing valid was readied (the caller moves it from scratch)
     */
    Optional<Chain> moveReadied(Versioned<Chain> read, DeviceId server, Placement now,
                                CompletableFuture<Optional<InstalledState>> installed, long found) {
        Chain c = read.value();
        ChainId id = c.id();
        Optional<PreparedMove> taken = moves.take(id);
        if (taken.isEmpty()) {
            takeBackLeft(id); // an owner that stopped during the deadline readied it: the move is made from scratch
            return Optional.empty();
        }
        PreparedMove m = taken.get();
        if (!m.was().equals(now) || !m.from().equals(server) || !servers.server(m.to()).isPresent()) {
            discard(m, "readied for a placement the chain no longer has, or its server is gone");
            return Optional.empty();
        }
        long t0 = System.nanoTime();
        Deployer.Result r;
        try {
            // the new switch rules, over the pipeline already up on the spare (rolled back together on a failure);
            // all devices at once: nothing reaches the chain until they are all in either way (its server is dead)
            r = deployer.deploy(m.plan(), Optional.of(m.start()), true);
        } catch (MetronException e) {
            tags.release(id, m.claimed());
            moves.release(id);
            log.warn("Chain {}: the move readied on {} failed ({}); moving it from scratch", id, m.to(),
                    e.getMessage());
            return Optional.empty();
        }
        long tSwitched = System.nanoTime();
        Chain up = c.withState(r.running() ? ChainState.ACTIVE : ChainState.DEPLOYED, "moved off " + server
                + " (unavailable) to " + m.to());
        // the old installed rules, read beside the chain and its placement: had before they are rewritten
        Optional<InstalledState> wasInstalled = installed.join();
        // one round: four maps, written at once (a Raft round each in a cluster, 60-500 ms under load); the chain
        // replaces the version read (a put reads it again first: a second round), or is put when it changed since
        moves.together(List.of(
                () -> store.placements().put(id, m.placement()),
                () -> store.installed().put(id, r.installed()),
                () -> {
                    if (!store.replaceChain(id, read, up)) {
                        store.chains().put(id, up); // a delete recorded meanwhile stands (ChainRecords)
                    }
                },
                () -> store.backups().put(id, new BackupConfiguration(id, m.offload().backups(),
                        m.offload().backupProfiles()))));
        moves.release(id); // its cores are the placement's now
        compilers.placed(up, m.compiler(), m.offload().compiled());
        long tRecorded = System.nanoTime();
        // where a failover's time goes after the deadline (agent death -> ACTIVE elsewhere is measured outside)
        log.warn("Chain {} moved off lost server {} to {}: {} in {} ms after the deadline (found and read {}, switch "
                        + "rules {}, store {} in one round; readied during the deadline in {} ms)", id, server,
                m.to(), up.state(), ChainBringUp.ms(found, tRecorded), ChainBringUp.ms(found, t0),
                ChainBringUp.ms(t0, tSwitched), ChainBringUp.ms(tSwitched, tRecorded), m.tookMs());
        // behind the traffic: the old rules the new placement does not take over (same entry) nor another chain
        // holds too (read here: a whole-map read, a Raft round in a cluster, that held the switch rules up by about
        // 100 ms when it came before them), what was armed for them, the old placement's tags; then the new backups
        Optional<InstalledState> old = wasInstalled.map(teardown::withoutShared);
        Set<Object> kept = Deployer.entries(r.installed().switchRules());
        old.ifPresent(st -> {
            List<String> left = deployer.removeStale(st, kept);
            if (!left.isEmpty()) {
                log.warn("Chain {}: rules of its placement on lost server {} not removed: {}", id, server, left);
            }
        });
        teardown.disarm(id, r.installed().switchRules());
        List<Tag> oldTags = tags.allocations().stream().filter(t -> t.chainId().equals(id))
                .map(TagAllocation::tag).filter(t -> !m.claimed().contains(t)).collect(Collectors.toList());
        tags.release(id, oldTags);
        chains.refreshBackups(id);
        log.info("Chain {}: its old rules, tags and armed backups off in {} ms", id,
                ChainBringUp.ms(tRecorded, System.nanoTime()));
        return Optional.of(up);
    }
}
