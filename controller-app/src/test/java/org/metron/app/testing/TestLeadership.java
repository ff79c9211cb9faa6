package org.metron.app.testing;

import org.metron.app.api.ChainId;
import org.metron.app.spi.Leadership;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Chain ownership among several controller instances in one JVM, as ONOS's LeadershipService elects per topic:
 * candidates in the order they ran, the first one leads; when the leader's instance stops (or withdraws) the next
 * candidate leads and is told. Instances share one {@code TestLeadership}; {@link #instance} gives each its view.
 * Each topic's term grows by one with every new leader (as Atomix's elector counts them). An instance can be
 * {@link #isolate isolated}: a node that lost its chains without knowing it (a GC pause, a partition).
 */
public final class TestLeadership {
    private final Map<ChainId, List<String>> candidates = new HashMap<>();
    private final Map<String, Instance> instances = new HashMap<>();
    /** Per topic, the term of its current (or last) leader. */
    private final Map<ChainId, Long> terms = new HashMap<>();

    /** The view of the instance called {@code name} (made on first use). */
    public synchronized Leadership instance(String name) {
        return instances.computeIfAbsent(name, Instance::new);
    }

    /** The instances running for {@code chain}, the owner first. */
    public synchronized List<String> candidates(ChainId chain) {
        return List.copyOf(candidates.getOrDefault(chain, List.of()));
    }

    /**
     * The instance is cut off without knowing it: the others see it stop (the next candidate of each topic it led
     * leads with the next term and is told), while its own view stays as it was: it still believes it owns what
     * it owned, with the terms it had.
     */
    public void isolate(String name) {
        Instance i;
        synchronized (this) {
            i = instances.get(name);
            Map<ChainId, Long> mine = new HashMap<>();
            candidates.forEach((chain, order) -> {
                if (!order.isEmpty() && order.get(0).equals(name)) {
                    mine.put(chain, terms.get(chain));
                }
            });
            i.frozen = Map.copyOf(mine);
        }
        List<Runnable> told = new ArrayList<>();
        synchronized (this) {
            for (Map.Entry<ChainId, List<String>> e : candidates.entrySet()) {
                told.addAll(leave(e.getKey(), e.getValue(), name));
            }
        }
        told.forEach(Runnable::run);
    }

    /** The instance stops: it leaves every topic, and the next candidate of each topic it led is told it leads. */
    public void stop(String name) {
        List<Runnable> told = new ArrayList<>();
        synchronized (this) {
            for (Map.Entry<ChainId, List<String>> e : candidates.entrySet()) {
                told.addAll(leave(e.getKey(), e.getValue(), name));
            }
            instances.remove(name);
        }
        told.forEach(Runnable::run);
    }

    private List<Runnable> leave(ChainId chain, List<String> order, String name) {
        boolean led = !order.isEmpty() && order.get(0).equals(name);
        order.remove(name);
        if (!led || order.isEmpty()) {
            return List.of();
        }
        terms.merge(chain, 1L, Long::sum);
        Instance next = instances.get(order.get(0));
        return next == null ? List.of() : List.of(() -> next.gained(chain));
    }

    private final class Instance implements Leadership {
        final String name;
        final List<Consumer<ChainId>> listeners = new CopyOnWriteArrayList<>();
        /** When isolated: the chains it led then and their terms, all it sees from then on. */
        volatile Map<ChainId, Long> frozen;

        Instance(String name) {
            this.name = name;
        }

        @Override
        public boolean actsFor(ChainId chain) {
            Map<ChainId, Long> f = frozen;
            return f != null ? f.containsKey(chain) : owner(chain).map(name::equals).orElse(false);
        }

        @Override
        public OptionalLong term(ChainId chain) {
            Map<ChainId, Long> f = frozen;
            if (f != null) {
                return f.containsKey(chain) ? OptionalLong.of(f.get(chain)) : OptionalLong.empty();
            }
            synchronized (TestLeadership.this) {
                return actsFor(chain) ? OptionalLong.of(terms.get(chain)) : OptionalLong.empty();
            }
        }

        @Override
        public void join(ChainId chain) {
            if (frozen != null) {
                return; // cut off: its runs reach nobody
            }
            boolean leads;
            synchronized (TestLeadership.this) {
                List<String> order = candidates.computeIfAbsent(chain, c -> new ArrayList<>());
                if (order.contains(name)) {
                    return;
                }
                order.add(name);
                leads = order.size() == 1;
                if (leads) {
                    terms.merge(chain, 1L, Long::sum);
                }
            }
            if (leads) {
                gained(chain);
            }
        }

        @Override
        public void release(ChainId chain) {
            if (frozen != null) {
                return;
            }
            List<Runnable> told;
            synchronized (TestLeadership.this) {
                told = leave(chain, candidates.getOrDefault(chain, new ArrayList<>()), name);
            }
            told.forEach(Runnable::run);
        }

        @Override
        public Optional<String> owner(ChainId chain) {
            Map<ChainId, Long> f = frozen;
            if (f != null) {
                return f.containsKey(chain) ? Optional.of(name) : Optional.empty();
            }
            synchronized (TestLeadership.this) {
                List<String> order = candidates.get(chain);
                return order == null || order.isEmpty() ? Optional.empty() : Optional.of(order.get(0));
            }
        }

        @Override
        public void addListener(Consumer<ChainId> gained) {
            listeners.add(gained);
        }

        @Override
        public void removeListener(Consumer<ChainId> gained) {
            listeners.remove(gained);
        }

        void gained(ChainId chain) {
            listeners.forEach(l -> l.accept(chain));
        }
    }
}
