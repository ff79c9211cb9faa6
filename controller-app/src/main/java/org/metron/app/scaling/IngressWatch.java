package org.metron.app.scaling;


import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.ChainState;
import org.metron.app.api.Placement;
import org.metron.app.store.ChainStore;
import org.onosproject.net.ConnectPoint;
import org.onosproject.net.DeviceId;
import org.onosproject.store.service.Versioned;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import static org.metron.app.api.Deployments.egress;
import static org.metron.app.api.Deployments.ingress;

/**
 * Switch port statistics as the early trigger (docs/scaling.md#monitoring): one poller for all chains reads the
 * receive counters of every placed chain's ingress port, one request per switch and interval, and turns them into an
 * ingress packet rate per chain. When a chain's rate jumps, its server is flagged so that the load monitor
 * samples it at once instead of waiting for its next streamed report; the rates are also shown to operators.
 */
public final class IngressWatch implements AutoCloseable {
    /**
     * How often the switches are asked, by default: once a second. Faster polling costs the switch: Open
     * vSwitch's userspace datapath answers OpenFlow requests in the thread that also forwards its non-PMD
     * ports, and at 100 ms the scaling benchmark lost packets at the switch in some trials.
     */
    public static final int INTERVAL_MS = 1000;
    private static final Logger log = LoggerFactory.getLogger(IngressWatch.class);

    private final ChainStore store;
    private final PortCounters ports;
    private final Consumer<DeviceId> flag;
    private final LongSupplier clock;
    private final int intervalMs;
    private final Map<ConnectPoint, Rate> rates = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "metron-ingress-watch");
        t.setDaemon(true);
        return t;
    });

    /**
     * @param flag called with a server whose chain's ingress rate jumped
     */
    public IngressWatch(ChainStore store, PortCounters ports, Consumer<DeviceId> flag, LongSupplier clock,
                        int intervalMs) {
        if (intervalMs < 10) {
            throw new IllegalArgumentException("port statistics interval " + intervalMs + " ms is below 10 ms");
        }
        this.store = Objects.requireNonNull(store);
        this.ports = Objects.requireNonNull(ports);
        this.flag = Objects.requireNonNull(flag);
        this.clock = Objects.requireNonNull(clock);
        this.intervalMs = intervalMs;
    }

    public IngressWatch start() {
        timer.scheduleWithFixedDelay(this::poll, intervalMs, intervalMs, TimeUnit.MILLISECONDS);
        return this;
    }

    /** One round: every switch holding a placed chain's ingress port is asked once. */
    void poll() {
        Map<DeviceId, List<Watched>> byDevice = new HashMap<>();
        for (Placement p : store.placements().snapshot().values()) {
            Optional<Chain> c = store.chains().get(p.chainId()).map(Versioned::value);
            if (p.server().isEmpty() || c.isEmpty() || c.get().state() != ChainState.ACTIVE) {
                continue;
            }
            ConnectPoint in = ingress(c.get().deployment());
            byDevice.computeIfAbsent(in.deviceId(), d -> new ArrayList<>()).add(new Watched(in, p.server().get()));
        }
        rates.keySet().removeIf(cp -> byDevice.getOrDefault(cp.deviceId(), List.of()).stream()
                .noneMatch(w -> w.port.equals(cp)));
        byDevice.forEach((device, watched) -> {
            long asked = clock.getAsLong();
            ports.rxPackets(device).whenComplete((counts, e) -> {
                if (e != null) {
                    log.debug("port statistics of {}: {}", device, e.toString());
                    return;
                }
                for (Watched w : watched) {
                    Long n = counts.get(w.port.port().toLong());
                    if (n != null && rates.computeIfAbsent(w.port, k -> new Rate()).add(asked, n)) {
                        flag.accept(w.server);
                    }
                }
            });
        });
    }

    /** The latest ingress packet rate of a chain's ingress port (packets/s), once two readings exist. */
    public Optional<Double> ingressPps(ChainId chain) {
        return store.chains().get(chain).map(Versioned::value)
                .flatMap(c -> Optional.ofNullable(rates.get(ingress(c.deployment()))))
                .flatMap(Rate::pps);
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }

    private static final class Watched {
        final ConnectPoint port;
        final DeviceId server;

        Watched(ConnectPoint port, DeviceId server) {
            this.port = port;
            this.server = server;
        }
    }

    /**
     * One port's rate from successive counter readings. A jump is a rate at least {@link #JUMP} times the
     * smoothed rate before it and {@link #MIN_RISE_PPS} above it (small rates jitter by whole packets).
     */
    static final class Rate {
        static final double JUMP = 1.5;
        static final double MIN_RISE_PPS = 50;
        private long lastMs = -1;
        private long lastCount;
        private double pps = Double.NaN;
        private double smoothed = Double.NaN;

        /** Takes a reading; answers whether the rate jumped. */
        synchronized boolean add(long atMs, long count) {
            boolean jumped = false;
            if (lastMs >= 0 && atMs > lastMs && count >= lastCount) {
                pps = (count - lastCount) * 1000.0 / (atMs - lastMs);
                jumped = !Double.isNaN(smoothed) && pps >= JUMP * smoothed && pps - smoothed >= MIN_RISE_PPS;
                smoothed = Double.isNaN(smoothed) ? pps : 0.5 * pps + 0.5 * smoothed;
            }
            lastMs = atMs;
            lastCount = count;
            return jumped;
        }

        synchronized Optional<Double> pps() {
            return Double.isNaN(pps) ? Optional.empty() : Optional.of(pps);
        }
    }
}
