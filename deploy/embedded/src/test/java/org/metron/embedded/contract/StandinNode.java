package org.metron.embedded.contract;

import org.metron.standin.ClusterStandin;
import org.metron.standin.EventDispatcher;
import org.metron.standin.cluster.AtomixNode;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * ONOS's core services of one node as tests/karaf/onos-standin stands them in (ONOS's own are not on Maven
 * Central), wired as SCR would: {@link #set} binds a component's {@code @Reference} field, {@link #start} activates
 * it, {@link #stop} deactivates what was started in reverse order. Events go out on the dispatcher's own thread, as
 * ONOS's do.
 */
final class StandinNode {
    final AtomixNode noCluster = new AtomixNode();
    final EventDispatcher events = new EventDispatcher();
    final ClusterStandin cluster = new ClusterStandin();
    private final List<Object> started = new ArrayList<>();

    StandinNode() {
        set(cluster, "dispatcher", events);
        set(cluster, "atomixNode", noCluster);
        start(cluster);
    }

    /** Binds {@code component}'s reference field {@code field} (as SCR injects it). */
    static void set(Object component, String field, Object service) {
        OnosStoreContractTest.set(component, field, service);
    }

    /** Activates a component whose references are bound. */
    <T> T start(T component) {
        call(component, "activate");
        started.add(0, component);
        return component;
    }

    /** Deactivates what was started, last first (a component without deactivate has nothing to stop). */
    void stop() {
        for (Object c : started) {
            if (Arrays.stream(c.getClass().getDeclaredMethods()).anyMatch(m -> m.getName().equals("deactivate"))) {
                call(c, "deactivate");
            }
        }
        call(events, "deactivate");
    }

    /** An SCR lifecycle method (protected, as ONOS writes them). */
    private static void call(Object component, String method) {
        try {
            java.lang.reflect.Method m = component.getClass().getDeclaredMethod(method);
            m.setAccessible(true);
            m.invoke(component);
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(method + " of " + component.getClass().getName(), e);
        }
    }
}
