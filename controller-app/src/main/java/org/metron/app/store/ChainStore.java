package org.metron.app.store;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.Placement;
import org.metron.app.api.TagAllocation;
import org.metron.app.spi.MetronMap;
import org.onosproject.store.service.Versioned;
import org.metron.app.spi.StoreFactory;
import org.metron.app.spi.SwitchProgrammer;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Metron's distributed state: one strongly consistent map per kind, all with {@link MetronSerializers}.
 * Holds no logic; the managers own the rules about what may be written when.
 */
public final class ChainStore {
    public static final String CHAINS = "metron-chains";
    public static final String PLACEMENTS = "metron-placements";
    public static final String TAGS = "metron-tags";
    public static final String INSTALLED = "metron-installed-rules";
    public static final String BACKUPS = "metron-backups";
    public static final String ARMED_RULES = "metron-armed-backup-rules";
    /** Failover moves readied during a lost server's deadline: their owners' intent, not the operator's. */
    public static final String PREPARED = "metron-prepared-moves";
    /** The newest ownership term that began an operation of each chain ({@link ChainTerms}). */
    public static final String TERMS = "metron-chain-terms";
    /** Servers an operator drained: the one record placement, scaling and the views read. */
    public static final String DRAINED = "metron-drained-servers";

    private final ChainRecords chains;
    private final MetronMap<ChainId, Placement> placements;
    private final MetronMap<TagKey, TagAllocation> tags;
    private final InstalledView installed;
    private final MetronMap<ChainId, BackupConfiguration> backups;
    private final InstalledView armedRules;
    private final MetronMap<ChainId, PreparedMoveRecord> prepared;
    private final ChainTerms terms;
    private final MetronMap<org.onosproject.net.DeviceId, DrainedServer> drained;
    private final Map<ChainId, Object> chainLocks = new ConcurrentHashMap<>();
    private final Object reservationLock = new Object();

    /**
     * @param switches where the chains' switch rules are read from: the installed-rules map keeps only their ids
     *                 ({@link InstalledView})
     */
    public ChainStore(StoreFactory factory, SwitchProgrammer switches) {
        this.chains = new ChainRecords(factory.map(CHAINS, MetronSerializers.NAMESPACE));
        this.placements = factory.map(PLACEMENTS, MetronSerializers.NAMESPACE);
        this.tags = factory.map(TAGS, MetronSerializers.NAMESPACE);
        this.installed = new InstalledView(factory.map(INSTALLED, MetronSerializers.NAMESPACE), switches);
        this.backups = factory.map(BACKUPS, MetronSerializers.NAMESPACE);
        this.armedRules = new InstalledView(factory.map(ARMED_RULES, MetronSerializers.NAMESPACE), switches);
        this.prepared = factory.map(PREPARED, MetronSerializers.NAMESPACE);
        this.terms = new ChainTerms(factory.map(TERMS, MetronSerializers.NAMESPACE));
        this.drained = factory.map(DRAINED, MetronSerializers.NAMESPACE);
    }

    /**
     * The node-local monitor for one chain. Every component that changes a chain on this instance (lifecycle,
     * scaling, recovery) shares this store, so they serialize on the same monitor; leadership serializes across
     * instances.
     */
    public Object lockFor(ChainId id) {
        return chainLocks.computeIfAbsent(id, k -> new Object());
    }

    /** Held (after, never before, a chain's monitor) while choosing and claiming free cores and tags. */
    public Object reservationLock() {
        return reservationLock;
    }

    /** The chains; a write never undoes a delete ({@link ChainRecords}). */
    public MetronMap<ChainId, Chain> chains() {
        return chains;
    }

    /**
     * Writes {@code next} over the chain's record as it was read ({@code read}), in one compare-and-set on its
     * version ({@link ChainRecords}: never undoing a delete). False when the record changed since.
     */
    public boolean replaceChain(ChainId id, Versioned<Chain> read, Chain next) {
        return chains.replace(id, read, next);
    }

    public MetronMap<ChainId, Placement> placements() {
        return placements;
    }

    /** The chain's placement now, if it has one (the value alone; CAS writers read {@link #placements()}). */
    public java.util.Optional<Placement> placement(ChainId id) {
        return placements().get(id).map(org.onosproject.store.service.Versioned::value);
    }

    public MetronMap<TagKey, TagAllocation> tags() {
        return tags;
    }

    /** Each chain's installed state: stored as ids, its switch rules read from the devices. */
    public MetronMap<ChainId, InstalledState> installed() {
        return installed;
    }

    /** One chain's installed-state record as stored (server, NIC rules, pipeline, rule ids): no device read. */
    public java.util.Optional<InstalledRecord> installedRecord(ChainId id) {
        return installed.record(id);
    }

    /**
     * How rules read from the switches become the chain's planned rules (the failover arming, which redirects some
     * to groups, reads them back in their plain form); rules are taken as read until this is set.
     */
    public void readRulesAs(java.util.function.BiFunction<ChainId, java.util.List<InstalledRule>,
            java.util.List<InstalledRule>> plain) {
        installed.readRulesAs(plain);
    }

    /** The installed-state records as stored (ids and roles, no device read): cheap, for scans over chains. */
    public Map<ChainId, InstalledRecord> installedRecords() {
        return installed.records();
    }

    public MetronMap<ChainId, BackupConfiguration> backups() {
        return backups;
    }

    /**
     * Each chain's backup rules pre-installed in the switches by the arming of its link backups (docs/failover.md),
     * stored as ids and read from the devices as the installed state is: nothing on a switch ties such a rule to its
     * chain (it matches on an entry the chain does not use), so an instance that did not arm the chain itself (it
     * restarted, took the chain over) knows them only from here. Written before they are installed.
     */
    public MetronMap<ChainId, InstalledState> armedRules() {
        return armedRules;
    }

    /**
     * The failover moves readied on spare servers, recorded by their owners before the spare is asked for anything
     * ({@link PreparedMoveRecord}): their cores are taken for every instance's placement, and the next owner of a
     * chain whose owner stopped takes back what its record names.
     */
    public MetronMap<ChainId, PreparedMoveRecord> prepared() {
        return prepared;
    }

    /** The terms chain operations began with: what fences a deposed instance's writes in the store's view. */
    public ChainTerms terms() {
        return terms;
    }

    /** The servers an operator drained ({@link DrainedServer}), by device id. */
    public MetronMap<org.onosproject.net.DeviceId, DrainedServer> drained() {
        return drained;
    }

    /** Whether {@code server} is drained: no placement, scale-out or failover may put anything on it. */
    public boolean isDrained(org.onosproject.net.DeviceId server) {
        return drained.get(server).isPresent();
    }
}
