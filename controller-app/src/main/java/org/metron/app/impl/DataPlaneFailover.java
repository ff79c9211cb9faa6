package org.metron.app.impl;

import com.google.common.collect.ImmutableList;
import org.metron.app.api.ChainId;
import org.metron.app.spi.FailoverGroup;
import org.metron.app.spi.NetworkView;
import org.metron.app.spi.SwitchProgrammer;
import org.metron.app.store.InstalledRule;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.Link;
import org.onosproject.net.flow.FlowRule;
import org.onosproject.net.flow.instructions.Instructions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
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
 * Callers hold the chain's lock. What is armed is kept here, in memory: an instance that takes a chain over arms
 * its backups anew after its next change.
 */
final class DataPlaneFailover {
    private static final Logger log = LoggerFactory.getLogger(DataPlaneFailover.class);

    private final SwitchProgrammer switches;
    private final long timeoutMs;
    private final Map<ChainId, List<LinkBackup>> backups = new ConcurrentHashMap<>();
    private final Map<ChainId, FailoverGroupPlanner.Plan> armed = new ConcurrentHashMap<>();
    /**
     * Group ids, fresh for every arming (a rule is moved to its new group before the old one is deleted, which
     * would delete the rule with it). Started at random: groups an earlier run of the host left in a switch keep
     * their ids, and a new group must not collide with them.
     */
    private final AtomicInteger groupIds = new AtomicInteger(ThreadLocalRandom.current().nextInt(1, 1 << 30));

    /**
     * Backups are armed as groups when {@code switches} {@link SwitchProgrammer#supportsFailoverGroups support}
     * them; otherwise link backups are only applied by the controller after a failure.
     */
    DataPlaneFailover(SwitchProgrammer switches, long timeoutMs) {
        this.switches = Objects.requireNonNull(switches);
        this.timeoutMs = timeoutMs;
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
        FailoverGroupPlanner.Plan plan = armed.get(id);
        if (plan == null || plan.isEmpty()) {
            return read;
        }
        Map<List<Object>, FailoverGroup> byId = new HashMap<>();
        plan.groups().forEach((d, gs) -> gs.forEach(g -> byId.put(List.of(d, g.id()), g)));
        return read.stream().map(r -> {
            Optional<Integer> group = r.rule().treatment().allInstructions().stream()
                    .filter(i -> i instanceof Instructions.GroupInstruction)
                    .map(i -> ((Instructions.GroupInstruction) i).groupId().id()).findFirst();
            FailoverGroup g = group.map(gid -> byId.get(List.<Object>of(r.rule().deviceId(), gid))).orElse(null);
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
        FailoverGroupPlanner.Plan old = armed(id);
        FailoverGroupPlanner.Plan next = FailoverGroupPlanner.plan(primary, linkBackups,
                d -> groupIds.getAndIncrement());
        next.notArmed().forEach(why -> log.info("Chain {}: not armed as groups: {}", id, why));
        // armed again even when nothing changed: the change that asked for this may have installed the plain
        // rules over the redirected ones (a reroute installs every rule of its devices)
        long t0 = System.nanoTime();
        try {
            next.groups().forEach((d, g) -> await(switches.addGroups(d, g), "adding " + g.size() + " groups to " + d));
            next.preinstalled().forEach((d, r) -> await(switches.install(d, r), "pre-installing " + r.size()
                    + " backup rules on " + d));
            next.redirected().forEach((d, r) -> await(switches.install(d, r), "redirecting " + r.size()
                    + " rules on " + d + " to their groups"));
        } catch (RuntimeException e) {
            log.warn("Chain {}: backups not armed ({}); the controller applies them after a failure", id,
                    e.getMessage());
            takeOut(next, old, primary, false);
            return;
        }
        armed.put(id, next);
        takeOut(old, next, primary, true);
        if (!next.isEmpty()) {
            log.info("Chain {}: {} fast-failover groups and {} backup rules armed in {} ms", id,
                    next.groups().values().stream().mapToInt(List::size).sum(),
                    next.preinstalled().values().stream().mapToInt(List::size).sum(),
                    (System.nanoTime() - t0) / 1_000_000);
        }
    }

    /** Takes out everything armed for a chain whose rules are now {@code primary} (empty once it is torn down). */
    void disarm(ChainId id, List<InstalledRule> primary) {
        backups.remove(id);
        FailoverGroupPlanner.Plan old = armed.remove(id);
        if (old != null) {
            takeOut(old, FailoverGroupPlanner.Plan.empty(), primary, true);
        }
    }

    /**
     * Removes {@code gone}'s arming, keeping what {@code kept} and the chain's rules {@code primary} use: a rule
     * that may still send to one of {@code gone}'s groups is pointed away first (deleting a group deletes the rules
     * sending to it): to {@code kept}'s group for that entry, else back to its plain form; then the groups go, then
     * the pre-installed rules no one uses. {@code keptLive}: {@code kept}'s redirected rules are in the switches
     * already (after a successful arming; not after a failed one, whose rules may have replaced them). Best effort:
     * a switch that is down took them with it.
     */
    private void takeOut(FailoverGroupPlanner.Plan gone, FailoverGroupPlanner.Plan kept, List<InstalledRule> primary,
                         boolean keptLive) {
        Map<Object, FlowRule> back = new HashMap<>();
        primary.forEach(r -> back.put(Deployer.entry(r.rule()), r.rule()));
        Set<Object> keptEntries = new java.util.HashSet<>();
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
        gone.groups().forEach((d, g) -> bestEffort(switches.removeGroups(d, g), "removing groups on " + d));
        Set<Object> keptPre = kept.preinstalled().values().stream().flatMap(List::stream).map(Deployer::entry)
                .collect(Collectors.toSet());
        gone.preinstalled().forEach((d, rules) -> {
            List<FlowRule> unused = rules.stream().filter(r -> !keptPre.contains(Deployer.entry(r))
                    && !back.containsKey(Deployer.entry(r))).collect(Collectors.toList());
            if (!unused.isEmpty()) {
                bestEffort(switches.remove(d, unused), "removing " + unused.size() + " backup rules on " + d);
            }
        });
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
