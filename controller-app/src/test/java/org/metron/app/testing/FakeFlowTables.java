package org.metron.app.testing;

import org.metron.agent.v1.FiveTuple;
import org.metron.agent.v1.FlowEntry;
import org.metron.agent.v1.GroupSpec;
import org.metron.agent.v1.PortBits;
import org.metron.agent.v1.StateTable;
import org.metron.drivers.agent.AgentException.Code;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@link TestAgent}'s flow tables, one per stateful element of a running group, with the real agent's rules
 * (agent/src/core/engine_backend.cc, state_copy.cc): a group exports a table per stateful element of its Click
 * config, empty or not; an import names such an element and its kind; a merge keeps a flow already there; an
 * update keeps the tables of a group whose spec did not change, fills a new group from its state_from sources
 * (only the flows whose source port has the state_filter's bits) and drops those of retired groups. Not
 * thread-safe: TestAgent calls it under its lock.
 */
final class FakeFlowTables {
    /** (pipeline, group) to its tables, by element name. */
    private final Map<List<String>, Map<String, StateTable>> tables = new LinkedHashMap<>();

    /** The tables of a group (as a test set them up, or as imported), in the order of its config. */
    List<StateTable> get(String pipeline, GroupSpec group) {
        Map<String, StateTable> held = tables.getOrDefault(List.of(pipeline, group.getGroupId()), Map.of());
        List<StateTable> out = new ArrayList<>();
        Set<String> named = new HashSet<>();
        for (StateTable empty : AgentRefusals.statefulElements(group.getClickConfig(), "click_config")) {
            out.add(held.getOrDefault(empty.getElement(), empty));
            named.add(empty.getElement());
        }
        // tables a test set for elements its config does not name (TestAgent.state) come after
        held.values().stream().filter(t -> !named.contains(t.getElement())).forEach(out::add);
        return out;
    }

    /** The tables of a group that hold flows (set by a test, imported or copied). */
    List<StateTable> held(String pipeline, String group) {
        List<StateTable> out = new ArrayList<>(tables.getOrDefault(List.of(pipeline, group), Map.of()).values());
        out.removeIf(t -> t.getEntriesCount() == 0);
        return out;
    }

    /** The tables a test gives a group, replacing what it had. */
    void set(String pipeline, String group, List<StateTable> given) {
        Map<String, StateTable> m = new LinkedHashMap<>();
        given.forEach(t -> m.put(t.getElement(), t));
        tables.put(List.of(pipeline, group), m);
    }

    /**
     * Imports tables into a group: every table must name one of its stateful elements, of that kind, before
     * anything changes. Returns how many flows were added.
     */
    long importInto(String pipeline, GroupSpec group, List<StateTable> snapshot, boolean merge) {
        Map<String, StateTable> kinds = new LinkedHashMap<>();
        AgentRefusals.statefulElements(group.getClickConfig(), "click_config").forEach(t -> kinds.put(t.getElement(), t));
        for (int i = 0; i < snapshot.size(); i++) {
            StateTable t = snapshot.get(i);
            StateTable own = kinds.get(t.getElement());
            if (own == null) {
                throw new AgentRefusals.Refused(Code.INVALID_ARGUMENT, "snapshot.tables[" + i + "].element: no "
                        + "stateful element '" + t.getElement() + "' in group '" + group.getGroupId() + "'");
            }
            if (!own.getKind().equals(t.getKind())) {
                throw new AgentRefusals.Refused(Code.INVALID_ARGUMENT, "snapshot.tables[" + i + "].kind: '"
                        + t.getKind() + "' but element '" + t.getElement() + "' is a " + own.getKind());
            }
        }
        Map<String, StateTable> held = tables.computeIfAbsent(List.of(pipeline, group.getGroupId()),
                k -> new LinkedHashMap<>());
        long n = 0;
        for (StateTable t : snapshot) {
            StateTable.Builder b = merge && held.containsKey(t.getElement()) ? held.get(t.getElement()).toBuilder()
                    : StateTable.newBuilder(t).clearEntries();
            n += add(b, t.getEntriesList(), null);
            held.put(t.getElement(), b.build());
        }
        return n;
    }

    /** Adds the flows not already in {@code b} (and, with a filter, only those whose source port matches). */
    private static long add(StateTable.Builder b, List<FlowEntry> flows, PortBits filter) {
        Set<FiveTuple> have = new HashSet<>();
        b.getEntriesList().forEach(e -> have.add(e.getKey()));
        long n = 0;
        for (FlowEntry e : flows) {
            boolean inSlice = filter == null || (e.getKey().getSrcPort() & filter.getMask()) == filter.getValue();
            if (inSlice && have.add(e.getKey())) {
                b.addEntries(e);
                n++;
            }
        }
        return n;
    }

    /**
     * A pipeline's group set changes from {@code before} to {@code after}: kept groups keep their tables, new
     * ones start from their sources', retired ones lose theirs.
     */
    void update(String pipeline, List<GroupSpec> before, List<GroupSpec> after) {
        Map<String, GroupSpec> old = new LinkedHashMap<>();
        before.forEach(g -> old.put(g.getGroupId(), g));
        Map<List<String>, Map<String, StateTable>> next = new LinkedHashMap<>();
        for (GroupSpec g : after) {
            List<String> key = List.of(pipeline, g.getGroupId());
            GroupSpec was = old.get(g.getGroupId());
            if (g.getStateFromCount() == 0 && was != null && sameRuntime(was, g)) {
                if (tables.containsKey(key)) {
                    next.put(key, tables.get(key));
                }
                continue;
            }
            Map<String, StateTable> filled = new LinkedHashMap<>();
            for (StateTable empty : AgentRefusals.statefulElements(g.getClickConfig(), "click_config")) {
                StateTable.Builder b = empty.toBuilder();
                for (String src : g.getStateFromList()) {
                    StateTable t = tables.getOrDefault(List.of(pipeline, src), Map.of()).get(empty.getElement());
                    if (t != null) {
                        add(b, t.getEntriesList(), g.hasStateFilter() ? g.getStateFilter() : null);
                    }
                }
                filled.put(empty.getElement(), b.build());
            }
            next.put(key, filled);
        }
        tables.keySet().removeIf(k -> k.get(0).equals(pipeline));
        tables.putAll(next);
    }

    /** Whether the agent keeps running a group as it is (engine_backend.cc's build_group reuse test). */
    static boolean sameRuntime(GroupSpec a, GroupSpec b) {
        return a.getClickConfig().equals(b.getClickConfig()) && a.getTag().equals(b.getTag())
                && a.getCore() == b.getCore() && a.getClassIdsList().equals(b.getClassIdsList())
                && a.getPortShare().equals(b.getPortShare());
    }

    void removePipeline(String pipeline) {
        tables.keySet().removeIf(k -> k.get(0).equals(pipeline));
    }

    void clear() {
        tables.clear();
    }
}
