package org.metron.app.impl;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;
import org.metron.app.api.RuleInfo;
import org.metron.app.spi.FailoverGroup;
import org.metron.app.spi.MetronMap;
import org.metron.app.spi.NetworkView;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.InstalledRule;
import org.metron.app.store.InstalledState;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.net.Link;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/**
 * Failover in the data plane: keeps each chain's link backups and, where the switches take fast-failover groups,
 * arms them there ({@link FailoverGroupPlanner}), so a link failure on a protected path is absorbed by the switch;
 * the controller then only makes the backup the chain's path and arms the next backups ({@link ChainReroute}).
 * Callers hold the chain's lock. What is armed is kept here, in memory, and checked against what the switches hold
 * ({@link HeldGroups}, read back at every arming): an instance that restarted or took a chain over finds the chain's
 * groups through the chain's own rules and its pre-installed rules in the store ({@code recorded}), adopts what it
 * would arm again as it is, and takes the rest out (docs/failover.md#restarts-and-takeovers).
 */
final class DataPlaneFailover {
    private static final Logger log = LoggerFactory.getLogger(DataPlaneFailover.class);

    private final SwitchProgrammer switches;
    /** Each chain's pre-installed backup rules, by flow id ({@link org.metron.app.store.ChainStore#armedRules}). */
    private final MetronMap<ChainId, InstalledState> recorded;
    private final long timeoutMs;
    private final Map<ChainId, List<LinkBackup>> backups = new ConcurrentHashMap<>();
    private final Map<ChainId, FailoverGroupPlanner.Plan> armed = new ConcurrentHashMap<>();
    /** Plans being armed now: their groups are in the switches before any rule sends to them. */
    private final Map<ChainId, FailoverGroupPlanner.Plan> arming = new ConcurrentHashMap<>();
    /**
     * Fresh group ids (a group with other buckets gets a new id: a rule is moved to its new group before the old
     * one is deleted, which would delete the rule with it). Started at random, and never one a switch holds.
     */
    private final AtomicInteger groupIds = new AtomicInteger(ThreadLocalRandom.current().nextInt(1, 1 << 30));
    /** Groups no rule and no arming names, by device and id, with when they were first seen so (nanoTime). */
    private final Map<List<Object>, Long> unnamedSince = new ConcurrentHashMap<>();
    /** How long a group must stay unnamed before it is deleted: 0 when no other instance arms groups. */
    private final long unnamedGraceNs;

    /**
     * Backups are armed as groups when {@code switches} {@link SwitchProgrammer#supportsFailoverGroups support}
     * them; otherwise link backups are only applied by the controller after a failure.
     *
     * @param recorded the chains' pre-installed backup rules as stored, written before they are installed
     * @param alone whether this instance is the only one arming groups ({@link
     *              org.metron.app.spi.Leadership#alone}): a group no rule and no arming of its own names is then
     *              deleted at once; else only once it stayed so for 4 step timeouts, longer than an arming takes
     *              (another instance adds a chain's groups before it redirects the chain's rules to them)
     */
    DataPlaneFailover(SwitchProgrammer switches, MetronMap<ChainId, InstalledState> recorded, long timeoutMs,
                      boolean alone) {
        this.switches = Objects.requireNonNull(switches);
        this.recorded = Objects.requireNonNull(recorded);
        this.timeoutMs = timeoutMs;
        this.unnamedGraceNs = alone ? 0 : TimeUnit.MILLISECONDS.toNanos(4 * timeoutMs);
    }

    /** The chain's backup for {@code failed} (either direction), if one was computed. */
    Optional<LinkBackup> backupFor(ChainId id, Link failed) {
        return backups.getOrDefault(id, List.of()).stream().filter(b -> b.covers(failed)).findFirst();
    }

    /**
     * Whether a link the chain's rules {@code primary} still send into, and for which it has a backup, is down in
     * {@code net}: its failure is being handled (the switches may be on the armed backup already) and the backups
     * must stay as they are until the chain is moved; recomputed then, they would lose that link's backup and
     * take its groups out.
     */
    boolean failing(ChainId id, NetworkView net, List<InstalledRule> primary) {
        Set<ConnectPoint> used = primary.stream().flatMap(r -> FailoverGroupPlanner.plainOutput(r.rule().treatment())
                .map(p -> new ConnectPoint(r.rule().deviceId(), p)).stream()).collect(Collectors.toSet());
        return backups.getOrDefault(id, List.of()).stream().map(LinkBackup::link)
                .filter(l -> used.contains(l.src()) || used.contains(l.dst()))
                .anyMatch(l -> net.egressLinks(l.src()).stream().noneMatch(x -> x.dst().equals(l.dst())));
    }

    /**
     * The chain's rules as planned, from rules read from the switches: a rule this instance's arming redirected to
     * a fast-failover group is read back in its plain form, which the group's first bucket holds ({@link
     * FailoverGroupPlanner}). The switch holds the redirected form; the chain's installed state, which backups are
     * planned from and plain forms are restored from, is the plain one. Rules not armed here are answered as read.
     */
    List<InstalledRule> plain(ChainId id, List<InstalledRule> read) {
        FailoverGroupPlanner.Plan plan = armed.getOrDefault(id, FailoverGroupPlanner.Plan.empty());
        Map<List<Object>, FailoverGroup> byId = new HashMap<>();
        plan.groups().forEach((d, gs) -> gs.forEach(g -> byId.put(List.of(d, g.id()), g)));
        // a group armed by an earlier run or another instance (or by an arming not recorded yet): read back
        Set<DeviceId> unknown = read.stream().filter(r -> HeldGroups.sentTo(r.rule().treatment())
                .filter(g -> !byId.containsKey(List.of(r.rule().deviceId(), g))).isPresent())
                .map(r -> r.rule().deviceId()).collect(Collectors.toSet());
        if (!unknown.isEmpty()) {
            HeldGroups.read(switches, unknown, timeoutMs).all().forEach((d, gs) -> gs.forEach(g ->
                    byId.putIfAbsent(List.of(d, g.id()), g)));
        }
        if (byId.isEmpty()) {
            return read;
        }
        return read.stream().map(r -> {
            FailoverGroup g = HeldGroups.sentTo(r.rule().treatment())
                    .map(gid -> byId.get(List.<Object>of(r.rule().deviceId(), gid))).orElse(null);
            return g == null ? r : new InstalledRule(r.role(), FailoverGroupPlanner.withTreatment(r.rule(),
                    g.buckets().get(0).treatment()));
        }).collect(Collectors.toList());
    }

    /** What is armed for the chain now (tests, logs). */
    FailoverGroupPlanner.Plan armed(ChainId id) {
        return armed.getOrDefault(id, FailoverGroupPlanner.Plan.empty());
    }

    /**
     * Takes the chain's new link backups, computed over its current rules {@code primary}, and arms them in place
     * of what was armed: new groups, the backups' rules on free entries, the redirected rules, then what the
     * previous arming left that is no longer needed. A switch that refuses leaves the previous arming in place.
     */
    void update(ChainId id, List<InstalledRule> primary, List<LinkBackup> linkBackups) {
        backups.put(id, ImmutableList.copyOf(linkBackups));
        if (!switches.supportsFailoverGroups()) {
            return;
        }
        long t0 = System.nanoTime();
        HeldGroups held = HeldGroups.read(switches, devices(primary), timeoutMs);
        // what this instance armed, else (it restarted, or took the chain over) what the chain's rules send to
        boolean known = armed.containsKey(id);
        FailoverGroupPlanner.Plan old = known ? armed.get(id) : recall(id, primary, held);
        FailoverGroupPlanner.Plan next = FailoverGroupPlanner.plan(primary, linkBackups, adopting(old, held));
        next.notArmed().forEach(why -> log.info("Chain {}: not armed as groups: {}", id, why));
        Map<DeviceId, List<FailoverGroup>> add = new LinkedHashMap<>();
        next.groups().forEach((d, gs) -> gs.stream().filter(g -> !held.holds(g))
                .forEach(g -> add.computeIfAbsent(d, k -> new ArrayList<>()).add(g)));
        int adopted = next.groups().values().stream().mapToInt(List::size).sum()
                - add.values().stream().mapToInt(List::size).sum();
        // armed again even when nothing changed: the change that asked for this may have installed the plain
        // rules over the redirected ones (a reroute installs every rule of its devices)
        arming.put(id, next);
        // the store holds old's pre-installed rules; next's are added to them before they are installed (a crash
        // half-way leaves them known), and written alone once old's are out; written only when they change
        Set<List<Object>> stored = preinstalledIds(old);
        if (!stored.containsAll(preinstalledIds(next))) {
            record(id, old, next);
            stored.addAll(preinstalledIds(next));
        }
        try {
            add.forEach((d, g) -> await(switches.addGroups(d, g), "adding " + g.size() + " groups to " + d));
            next.preinstalled().forEach((d, r) -> await(switches.install(d, r), "pre-installing " + r.size()
                    + " backup rules on " + d));
            next.redirected().forEach((d, r) -> await(switches.install(d, r), "redirecting " + r.size()
                    + " rules on " + d + " to their groups"));
        } catch (RuntimeException e) {
            log.warn("Chain {}: backups not armed ({}); the controller applies them after a failure", id,
                    e.getMessage());
            takeOut(next, old, primary, false);
            if (!stored.equals(preinstalledIds(old))) {
                record(id, old);
            }
            if (!known) {
                armed.put(id, old); // what the switches still hold of an earlier arming stays known
            }
            arming.remove(id);
            return;
        }
        armed.put(id, next);
        arming.remove(id);
        int stale = takeOut(old, next, primary, true);
        if (!stored.equals(preinstalledIds(next))) {
            record(id, next);
        }
        int unnamed = deleteUnnamed(held, old);
        if (!next.isEmpty() || !known || stale + unnamed > 0) {
            log.info("Chain {}: {} fast-failover groups ({} adopted as the switches held them) and {} backup rules "
                            + "armed{}; {} stale groups of the chain and {} groups nothing names deleted, in {} ms", id,
                    next.groups().values().stream().mapToInt(List::size).sum(), adopted,
                    next.preinstalled().values().stream().mapToInt(List::size).sum(),
                    known ? "" : " (re-armed: its arming read back from the switches)", stale, unnamed,
                    (System.nanoTime() - t0) / 1_000_000);
        }
    }

    /**
     * Group ids for a new plan: a group of {@code old} that the switch holds as it is, with the same buckets, is
     * taken as it is (each once); other groups get a fresh id no switch read holds.
     */
    private FailoverGroupPlanner.GroupIds adopting(FailoverGroupPlanner.Plan old, HeldGroups held) {
        Map<DeviceId, List<FailoverGroup>> left = new HashMap<>();
        old.groups().forEach((d, gs) -> gs.stream().filter(held::holds)
                .forEach(g -> left.computeIfAbsent(d, k -> new ArrayList<>()).add(g)));
        return (d, buckets) -> {
            List<FailoverGroup> same = left.getOrDefault(d, List.of());
            for (FailoverGroup g : same) {
                if (g.buckets().equals(buckets)) {
                    same.remove(g);
                    return g.id();
                }
            }
            int id;
            do {
                id = groupIds.getAndIncrement() & 0x7fffffff;
            } while (id == 0 || held.group(d, id).isPresent());
            return id;
        };
    }

    /**
     * Deletes the groups read in {@code held} that no plan of this instance (armed or being armed) names and no
     * rule of Metron's on their device sends to: left by an arming cut short (a crash between adding its groups and
     * redirecting its rules), or by a removal that could not reach the switch. With other instances about, a group
     * must have stayed so for a while first ({@link #unnamedGraceNs}): one of them may be arming it.
     *
     * @return how many were deleted
     */
    private int deleteUnnamed(HeldGroups held, FailoverGroupPlanner.Plan takenOut) {
        Set<List<Object>> named = new HashSet<>();
        java.util.stream.Stream.concat(java.util.stream.Stream.concat(armed.values().stream(),
                arming.values().stream()), java.util.stream.Stream.of(takenOut))
                .forEach(p -> p.groups().forEach((d, gs) -> gs.forEach(g -> named.add(List.of(d, g.id())))));
        int deleted = 0;
        long now = System.nanoTime();
        for (Map.Entry<DeviceId, java.util.Collection<FailoverGroup>> e : held.all().entrySet()) {
            List<FailoverGroup> candidates = e.getValue().stream()
                    .filter(g -> !named.contains(List.of(e.getKey(), g.id()))).collect(Collectors.toList());
            if (candidates.isEmpty()) {
                continue;
            }
            Optional<Set<Integer>> sentTo = HeldGroups.referenced(switches, e.getKey());
            if (sentTo.isEmpty()) {
                continue;
            }
            List<FailoverGroup> unused = candidates.stream().filter(g -> !sentTo.get().contains(g.id()))
                    .collect(Collectors.toList());
            Set<Integer> unusedIds = unused.stream().map(FailoverGroup::id).collect(Collectors.toSet());
            unnamedSince.keySet().removeIf(k -> k.get(0).equals(e.getKey()) && !unusedIds.contains(k.get(1)));
            List<FailoverGroup> gone = unused.stream()
                    .filter(g -> now - unnamedSince.computeIfAbsent(List.of(e.getKey(), g.id()), k -> now)
                            >= unnamedGraceNs).collect(Collectors.toList());
            if (!gone.isEmpty()) {
                log.info("{}: deleting fast-failover groups {} (no rule sends to them, no arming names them)",
                        e.getKey(), gone.stream().map(FailoverGroup::id).collect(Collectors.toList()));
                bestEffort(switches.removeGroups(e.getKey(), gone), "removing unused groups on " + e.getKey());
                gone.forEach(g -> unnamedSince.remove(List.of(e.getKey(), g.id())));
                deleted += gone.size();
            }
        }
        return deleted;
    }

    /**
     * Takes out everything armed for a chain whose rules are now {@code primary} (empty once it is torn down): what
     * this instance armed, else what the store records as pre-installed for it and the groups {@code primary} send
     * to. A chain being removed has what it armed read back first ({@link #recallForRemoval}).
     */
    void disarm(ChainId id, List<InstalledRule> primary) {
        backups.remove(id);
        FailoverGroupPlanner.Plan old = armed.remove(id);
        boolean recalled = old == null && switches.supportsFailoverGroups();
        if (recalled) {
            old = recall(id, primary, HeldGroups.read(switches, devices(primary), timeoutMs));
        }
        if (old != null) {
            takeOut(old, FailoverGroupPlanner.Plan.empty(), primary, true);
        }
        if (recalled || old != null && !old.preinstalled().isEmpty()) {
            record(id); // a record whose rules the switches no longer hold goes too
        }
    }

    /**
     * Before the chain's rules {@code primary} are removed (the chain is deleted, or cleared to be brought up again):
     * when this instance did not arm it (it restarted or took the chain over, and the chain goes before it is re-armed),
     * its arming is read back now, while its rules still send to its groups, and kept as armed here: the removal's
     * {@link #disarm} then takes its groups and pre-installed rules off the switches.
     */
    void recallForRemoval(ChainId id, List<InstalledRule> primary) {
        if (!switches.supportsFailoverGroups() || armed.containsKey(id)) {
            return;
        }
        FailoverGroupPlanner.Plan found = recall(id, primary, HeldGroups.read(switches, devices(primary), timeoutMs));
        if (!found.isEmpty()) {
            armed.putIfAbsent(id, found);
        }
    }

    /**
     * Forgets what this instance keeps of the chain's backups and arming, touching no switch: it has just come to own
     * the chain (again), and another instance may have moved and re-armed it meanwhile. The chain is then re-armed
     * as any chain it takes over, from what the switches and the store hold.
     */
    void forget(ChainId id) {
        backups.remove(id);
        armed.remove(id);
    }

    /**
     * The chain's arming as the switches and the store hold it, for an instance that did not arm it: the groups its
     * rules {@code primary} send to ({@link HeldGroups#found}), with those rules, and its recorded pre-installed rules.
     */
    private FailoverGroupPlanner.Plan recall(ChainId id, List<InstalledRule> primary, HeldGroups held) {
        FailoverGroupPlanner.Plan found = held.found(switches, primary);
        Map<DeviceId, List<FlowRule>> pre = new LinkedHashMap<>();
        recorded.get(id).map(Versioned::value).ifPresent(st -> st.switchRules().forEach(r ->
                pre.computeIfAbsent(r.rule().deviceId(), k -> new ArrayList<>()).add(r.rule())));
        return new FailoverGroupPlanner.Plan(found.groups(), pre, found.redirected(), List.of());
    }

    /** Stores the pre-installed rules of {@code plans} (by id) as the chain's, or nothing when they have none. */
    private void record(ChainId id, FailoverGroupPlanner.Plan... plans) {
        Map<List<Object>, InstalledRule> rules = new LinkedHashMap<>();
        for (FailoverGroupPlanner.Plan p : plans) {
            // the role is not read back: a pre-installed rule is one of a backup's path
            p.preinstalled().values().forEach(rs -> rs.forEach(r -> rules.putIfAbsent(List.of(r.deviceId(), r.id()),
                    new InstalledRule(RuleInfo.Role.TRANSIT, r))));
        }
        try {
            if (rules.isEmpty()) {
                recorded.remove(id);
            } else {
                recorded.put(id, new InstalledState(id, Optional.empty(), new ArrayList<>(rules.values()), List.of(),
                        false));
            }
        } catch (RuntimeException e) {
            // the arming goes on: a later arming or the chain's removal by this instance takes them out still
            log.warn("Chain {}: its pre-installed backup rules not recorded: {}", id, e.toString());
        }
    }

    private static Set<List<Object>> preinstalledIds(FailoverGroupPlanner.Plan p) {
        Set<List<Object>> out = new HashSet<>();
        p.preinstalled().values().forEach(rs -> rs.forEach(r -> out.add(List.of(r.deviceId(), r.id()))));
        return out;
    }

    private static Set<DeviceId> devices(List<InstalledRule> rules) {
        Set<DeviceId> out = new LinkedHashSet<>();
        rules.forEach(r -> out.add(r.rule().deviceId()));
        return out;
    }

    /**
     * Removes {@code gone}'s arming, keeping what {@code kept} and the chain's rules {@code primary} use: a rule
     * that may still send to one of {@code gone}'s groups is pointed away first (deleting a group deletes the rules
     * sending to it): to {@code kept}'s group for that entry, else back to its plain form; then the groups go, then
     * the pre-installed rules no one uses. {@code keptLive}: {@code kept}'s redirected rules are in the switches
     * already (after a successful arming; not after a failed one, whose rules may have replaced them). Best effort:
     * a switch that is down took them with it.
     */
    private int takeOut(FailoverGroupPlanner.Plan gone, FailoverGroupPlanner.Plan kept, List<InstalledRule> primary,
                        boolean keptLive) {
        Map<Object, FlowRule> back = new HashMap<>();
        primary.forEach(r -> back.put(Deployer.entry(r.rule()), r.rule()));
        Set<Object> keptEntries = new HashSet<>();
        kept.redirected().values().stream().flatMap(List::stream).forEach(r -> {
            keptEntries.add(Deployer.entry(r));
            back.put(Deployer.entry(r), r);
        });
        gone.redirected().forEach((d, rules) -> {
            List<FlowRule> restore = rules.stream().map(Deployer::entry)
                    .filter(e -> !(keptLive && keptEntries.contains(e)))
                    .map(back::get).filter(Objects::nonNull).collect(Collectors.toList());
            if (!restore.isEmpty()) {
                bestEffort(switches.install(d, restore), "restoring " + restore.size() + " rules on " + d);
            }
        });
        // a group both name (adopted, same id and buckets) stays
        Set<List<Object>> keptGroups = new HashSet<>();
        kept.groups().forEach((d, gs) -> gs.forEach(g -> keptGroups.add(List.of(d, g.id()))));
        int removed = 0;
        for (Map.Entry<DeviceId, List<FailoverGroup>> e : gone.groups().entrySet()) {
            List<FailoverGroup> drop = e.getValue().stream()
                    .filter(g -> !keptGroups.contains(List.of(e.getKey(), g.id()))).collect(Collectors.toList());
            if (!drop.isEmpty()) {
                bestEffort(switches.removeGroups(e.getKey(), drop), "removing groups on " + e.getKey());
                removed += drop.size();
            }
        }
        Set<Object> keptPre = kept.preinstalled().values().stream().flatMap(List::stream).map(Deployer::entry)
                .collect(Collectors.toSet());
        gone.preinstalled().forEach((d, rules) -> {
            List<FlowRule> unused = rules.stream().filter(r -> !keptPre.contains(Deployer.entry(r))
                    && !back.containsKey(Deployer.entry(r))).collect(Collectors.toList());
            if (!unused.isEmpty()) {
                bestEffort(switches.remove(d, unused), "removing " + unused.size() + " backup rules on " + d);
            }
        });
        return removed;
    }

    private void await(CompletableFuture<Void> f, String what) {
        try {
            f.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(what + ": interrupted", e);
        } catch (Exception e) {
            throw new IllegalStateException(what + ": " + AgentCalls.message(e), e);
        }
    }

    private void bestEffort(CompletableFuture<Void> f, String what) {
        try {
            await(f, what);
        } catch (IllegalStateException e) {
            log.warn("{}", e.getMessage());
        }
    }
}
