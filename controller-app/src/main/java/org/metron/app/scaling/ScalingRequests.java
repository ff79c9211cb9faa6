package org.metron.app.scaling;

import org.metron.app.api.ChainId;
import org.metron.app.api.MetronException;
import org.metron.app.spi.Leadership;
import org.metron.app.spi.MetronMap;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Operator scaling requests follow chain ownership, as chain writes do (impl.OwnerHandover): only the chain's owner
 * splits or merges it, so an operator's request never runs beside the owner's own scaling or recovery. An instance
 * that does not own the chain records the request in a shared map ({@link ScalingStore#REQUESTS}); the owner follows
 * the map's events ({@link MetronMap#addListener}), takes the request (a versioned replace, so exactly one instance runs it)
 * and writes back its event or refusal, which the asking instance answers with as if it had run it. A request the
 * owner has not answered within the wait is left to the owner: {@link Pending} (REST: 202).
 */
public final class ScalingRequests implements AutoCloseable {
    /** How long an asking instance waits for the owner: an operation's own steps are bounded by its timeouts. */
    public static final Duration WAIT = Duration.ofSeconds(30);
    private static final long POLL_MS = 20;
    private static final Logger log = LoggerFactory.getLogger(ScalingRequests.class);

    /** The owner has not answered within the wait; it carries on. */
    public static final class Pending extends RuntimeException {
        private static final long serialVersionUID = 1L;
        private final String request;

        Pending(String request, String message) {
            super(message);
            this.request = request;
        }

        /** The request's id in {@link ScalingStore#REQUESTS}. */
        public String request() {
            return request;
        }
    }

    private final MetronMap<String, ScalingRequest> requests;
    private final Leadership leadership;
    private final Function<ScalingRequest, ScalingRequest> run;
    private final Duration wait;
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "metron-scaling-requests");
        t.setDaemon(true);
        return t;
    });
    private final Consumer<String> changed = id -> worker.execute(() -> serve(id));

    /**
     * @param run runs a request here, as the owner, and answers it ({@link ScalingRequest#answered}; throws the
     *            operator's MetronException when it refuses)
     */
    ScalingRequests(MetronMap<String, ScalingRequest> requests, Leadership leadership,
                    Function<ScalingRequest, ScalingRequest> run, Duration wait) {
        this.requests = Objects.requireNonNull(requests);
        this.leadership = Objects.requireNonNull(leadership);
        this.run = Objects.requireNonNull(run);
        this.wait = Objects.requireNonNull(wait);
    }

    /** Follows the map's events and serves what was asked before (of the chains this instance owns). */
    void start() {
        requests.addListener(changed);
        worker.execute(() -> requests.snapshot().keySet().forEach(this::serve));
    }

    /** This instance came to own {@code chain}: it serves the requests still waiting for it. */
    void tookOver(ChainId chain) {
        worker.execute(() -> requests.snapshot().forEach((id, r) -> {
            if (r.chain().equals(chain)) {
                serve(id);
            }
        }));
    }

    /**
     * Records {@code r}'s kind for the chain's owner and waits for its answer.
     *
     * @return the request as the owner answered it (its event, or its move)
     * @throws MetronException the owner's refusal, as it threw it
     * @throws Pending         the owner has not answered within the wait
     */
    ScalingRequest ask(ChainId chain, ScalingRequest.Kind kind, String first, String second) {
        String id = UUID.randomUUID().toString();
        requests.put(id, ScalingRequest.ask(id, chain, kind, first, second));
        long end = System.nanoTime() + wait.toNanos();
        while (true) {
            Optional<ScalingRequest> now = requests.get(id).map(Versioned::value);
            if (now.isPresent() && now.get().isAnswered()) {
                requests.remove(id);
                Optional<MetronException> refused = now.get().refusal();
                if (refused.isPresent()) {
                    throw refused.get();
                }
                return now.get();
            }
            if (now.isEmpty() || System.nanoTime() > end) {
                String owner = leadership.owner(chain).orElse("no instance yet");
                throw new Pending(id, "chain " + chain + ": its owner (" + owner + ") has "
                        + (now.map(ScalingRequest::isTaken).orElse(false) ? "not finished" : "not yet taken")
                        + " the " + kind.name().toLowerCase() + " after " + wait.toSeconds() + " s; it carries "
                        + "on, see " + (kind == ScalingRequest.Kind.MOVE ? "where the chain runs (GET /chains/"
                        + chain + ")" : "the chain's scaling history"));
            }
            try {
                Thread.sleep(POLL_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Pending(id, "chain " + chain + ": interrupted waiting for its owner");
            }
        }
    }

    /** Runs request {@code id} when it waits, this instance owns its chain and takes it first. */
    private void serve(String id) {
        try {
            Optional<Versioned<ScalingRequest>> v = requests.get(id);
            if (v.isEmpty() || v.get().value().isTaken() || !leadership.actsFor(v.get().value().chain())) {
                return;
            }
            ScalingRequest r = v.get().value();
            if (!requests.replace(id, v.get().version(), r.taken())) {
                return; // another instance took it (or it changed): that write brings a new event
            }
            ScalingRequest answer;
            try {
                answer = run.apply(r);
            } catch (MetronException e) {
                answer = r.refused(e);
            } catch (RuntimeException e) {
                // answered all the same: the asker must not wait for a request nobody will finish
                answer = r.refused(new MetronException(MetronException.Fault.INTERNAL, "chain " + r.chain() + ": "
                        + r.kind().name().toLowerCase() + " failed on its owner: " + e));
            }
            // the asker removes the request once it read the answer; one it gave up on stays answered
            requests.put(id, answer);
            Optional<String> moved = answer.move().map(m -> "to " + m.to());
            log.info("Chain {}: ran the {} another instance recorded: {}", r.chain(), r.kind(),
                    answer.event().map(e -> e.outcome().name()).or(() -> moved).orElse("refused"));
        } catch (RuntimeException e) {
            log.warn("Scaling request {}: serving it failed: {}", id, e.toString());
        }
    }

    @Override
    public void close() {
        requests.removeListener(changed);
        worker.shutdownNow();
    }
}
