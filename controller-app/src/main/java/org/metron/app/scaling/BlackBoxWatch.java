package org.metron.app.scaling;

import org.metron.agent.v1.BlackBoxStats;
import org.metron.agent.v1.GroupStats;
import org.metron.agent.v1.Stats;
import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.PendingPart;
import org.metron.app.spi.Leadership;
import org.metron.app.store.ChainStore;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

/**
 * The chains' black-box NFs (docs/blackbox.md) as the agents' load reports show them ({@code
 * GroupStats.black_boxes}): the latest status of each, for REST, CLI, GUI and metrics, and what their state means
 * for their chain. A chain one of whose black boxes is FAILED (its agent gave up restarting it) does not carry its
 * traffic as declared: it goes from ACTIVE to DEGRADED with the failed boxes as its pending parts (as a lost
 * server's chain does, AgentWatch/ServerRecovery), and back to ACTIVE when no box of it is FAILED any more and
 * nothing else is pending. Only the instance acting for a chain changes it; every instance keeps the statuses.
 * State changes are logged.
 */
public final class BlackBoxWatch implements AutoCloseable {
    /** How a black box's pending part starts (PendingPart#what). */
    static final String PART = "black box ";
    private static final Logger log = LoggerFactory.getLogger(BlackBoxWatch.class);

    private final ChainStore store;
    private final Leadership leadership;
    /** Per server, the black boxes of its latest report. */
    private final Map<DeviceId, List<BlackBoxStatus>> latest = new ConcurrentHashMap<>();
    /** Chain state changes run here, off the report's thread (store writes may wait on the cluster). */
    private final ExecutorService judge = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "metron-blackbox-watch");
        t.setDaemon(true);
        return t;
    });

    public BlackBoxWatch(ChainStore store, Leadership leadership) {
        this.store = Objects.requireNonNull(store);
        this.leadership = Objects.requireNonNull(leadership);
    }

    /** One load report of a server: its black boxes replace the ones of its previous report. */
    public void observe(DeviceId server, Stats now, long atMs) {
        List<BlackBoxStatus> boxes = new ArrayList<>();
        for (GroupStats g : now.getGroupsList()) {
            for (BlackBoxStats b : g.getBlackBoxesList()) {
                boxes.add(new BlackBoxStatus(ChainId.of(g.getPipelineId()), g.getGroupId(), server, b, atMs));
            }
        }
        List<BlackBoxStatus> before = latest.put(server, List.copyOf(boxes));
        Map<String, String> was = new HashMap<>();
        Set<ChainId> touched = new LinkedHashSet<>();
        if (before != null) {
            before.forEach(b -> was.put(key(b), b.stats().getState()));
        }
        // chains to judge: a box of theirs changed state, came or went, or is FAILED (the chain may have become
        // ACTIVE since); not every report of every chain, which would read the store every interval
        for (BlackBoxStatus b : boxes) {
            String state = b.stats().getState();
            if (!state.equals(was.remove(key(b)))) {
                touched.add(b.chain());
                log.info("Chain {} on {}: {} {} (restarts {}, last exit '{}')", b.chain(), server, b.part(), state,
                        b.stats().getRestarts(), b.stats().getLastExit());
            } else if (b.failed()) {
                touched.add(b.chain());
            }
        }
        if (before != null) {
            before.stream().filter(b -> was.containsKey(key(b))).forEach(b -> touched.add(b.chain()));
        }
        if (!touched.isEmpty() && !judge.isShutdown()) {
            judge.execute(() -> touched.forEach(this::judgeQuietly));
        }
    }

    private static String key(BlackBoxStatus b) {
        return b.chain().name() + "/" + b.part();
    }

    /** A chain's black boxes on every server, by group and element. */
    public List<BlackBoxStatus> of(ChainId chain) {
        return all().stream().filter(b -> b.chain().equals(chain)).collect(Collectors.toList());
    }

    /** Every chain's black boxes. */
    public List<BlackBoxStatus> all() {
        List<BlackBoxStatus> out = new ArrayList<>();
        latest.values().forEach(out::addAll);
        out.sort(java.util.Comparator.comparing((BlackBoxStatus b) -> b.chain().name()).thenComparing(
                BlackBoxStatus::group).thenComparing(b -> b.stats().getElement()));
        return out;
    }

    /** A server's reports stopped (its stream failed): its boxes are not known any more. */
    public void forget(DeviceId server) {
        latest.remove(server);
    }

    private void judgeQuietly(ChainId id) {
        try {
            judge(id);
        } catch (RuntimeException e) {
            log.warn("Judging the black boxes of chain {} failed: {}", id, e.toString());
        }
    }

    /** Moves a chain between ACTIVE and DEGRADED by its black boxes' state (see the class comment). */
    void judge(ChainId id) {
        if (!leadership.actsFor(id)) {
            return;
        }
        Optional<Chain> found = store.chains().get(id).map(Versioned::value);
        if (found.isEmpty()) {
            return;
        }
        Chain c = found.get();
        List<PendingPart> failed = new ArrayList<>();
        for (BlackBoxStatus b : of(id)) {
            if (b.failed()) {
                failed.add(new PendingPart(b.server(), b.part(), "FAILED after " + b.stats().getRestarts()
                        + " restarts" + (b.stats().getLastExit().isEmpty() ? "" : ", last " + b.stats().getLastExit())));
            }
        }
        boolean onlyBoxes = !c.pending().isEmpty() && c.pending().stream().allMatch(p -> p.what().startsWith(PART));
        if (c.state() == ChainState.ACTIVE && !failed.isEmpty()) {
            store.chains().put(id, c.withState(ChainState.DEGRADED, failed.get(0).what() + " FAILED", failed));
            log.warn("Chain {} DEGRADED: {}", id, failed);
        } else if (c.state() == ChainState.DEGRADED && onlyBoxes && failed.isEmpty()) {
            store.chains().put(id, c.withState(ChainState.ACTIVE, ""));
            log.info("Chain {} ACTIVE again: no black box of it is FAILED", id);
        } else if (c.state() == ChainState.DEGRADED && onlyBoxes && !failed.equals(c.pending())) {
            store.chains().put(id, c.withState(ChainState.DEGRADED, failed.get(0).what() + " FAILED", failed));
        }
    }

    @Override
    public void close() {
        judge.shutdownNow();
    }
}
