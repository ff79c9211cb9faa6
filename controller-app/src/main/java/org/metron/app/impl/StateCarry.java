package org.metron.app.impl;

import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableMap;
import com.google.common.collect.ImmutableSet;
import org.metron.agent.v1.StateSnapshot;
import org.metron.agent.v1.StateTable;
import org.metron.app.api.GroupAssignment;
import org.metron.app.api.Placement;
import org.metron.synth.ClassGroup;
import org.metron.synth.CompiledChain;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which flow state a chain update carries from the running version's groups to the new version's (docs/updates.md).
 * An element's state carries over when the element is <em>unchanged</em>: a placed group of the new version and a
 * placed group of the old one run compiled groups with the same stateful key (the canonical text of the stateful
 * operations the group's classes go through, in order: an element's position in it is part of the key), and both
 * group configurations declare the element with the same name, the same class and the same arguments. Each table
 * of such an element is copied from every old group that has it into every new group that has it; tables of
 * other elements are not (the new element starts empty). Pure: touches no agent. Immutable.
 */
public final class StateCarry {
    /** {@code name :: Class(}: the start of a declaration with arguments in a group's Click config. */
    private static final Pattern DECLARATION = Pattern.compile("([A-Za-z_][\\w@/]*)\\s*::\\s*([A-Za-z_]\\w*)\\s*\\(");

    /** One old group and the elements whose tables go from it into a new group. */
    public static final class Source {
        private final String oldGroup;
        private final Set<String> elements;

        Source(String oldGroup, Set<String> elements) {
            this.oldGroup = Objects.requireNonNull(oldGroup);
            this.elements = ImmutableSet.copyOf(elements);
        }

        public String oldGroup() {
            return oldGroup;
        }

        /** Names of the unchanged elements (stateful or not: only stateful ones export tables). */
        public Set<String> elements() {
            return elements;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Source && ((Source) o).oldGroup.equals(oldGroup)
                    && ((Source) o).elements.equals(elements);
        }

        @Override
        public int hashCode() {
            return Objects.hash(oldGroup, elements);
        }

        @Override
        public String toString() {
            return oldGroup + elements;
        }
    }

    private final Map<String, List<Source>> byNewGroup;

    private StateCarry(Map<String, List<Source>> byNewGroup) {
        this.byNewGroup = ImmutableMap.copyOf(byNewGroup);
    }

    /** Nothing carries over (a version without server groups on either side). */
    public static StateCarry none() {
        return new StateCarry(Map.of());
    }

    /**
     * The carry-over from the running version (its placement and compiled form) to the new one.
     */
    public static StateCarry between(Placement oldPlacement, CompiledChain oldCompiled, Placement newPlacement,
                                     CompiledChain newCompiled) {
        Map<String, List<Source>> out = new LinkedHashMap<>();
        for (GroupAssignment ng : newPlacement.groups()) {
            ClassGroup n = AgentRequests.compiledGroup(newCompiled, ng.groupId());
            Map<String, String> mine = declarations(n.clickConfig());
            List<Source> sources = new ArrayList<>();
            for (GroupAssignment og : oldPlacement.groups()) {
                ClassGroup o = AgentRequests.compiledGroup(oldCompiled, og.groupId());
                if (o.statefulKey().isEmpty() || !o.statefulKey().equals(n.statefulKey())) {
                    continue;
                }
                Map<String, String> theirs = declarations(o.clickConfig());
                Set<String> same = new java.util.TreeSet<>();
                mine.forEach((name, decl) -> {
                    if (decl.equals(theirs.get(name))) {
                        same.add(name);
                    }
                });
                if (!same.isEmpty()) {
                    sources.add(new Source(og.groupId(), same));
                }
            }
            if (!sources.isEmpty()) {
                out.put(ng.groupId(), ImmutableList.copyOf(sources));
            }
        }
        return new StateCarry(out);
    }

    /** Where each new group's state comes from; a group absent here starts empty. */
    public Map<String, List<Source>> sources() {
        return byNewGroup;
    }

    /** Old groups some new group takes state from. */
    public Set<String> oldGroups() {
        Set<String> out = new java.util.LinkedHashSet<>();
        byNewGroup.values().forEach(l -> l.forEach(s -> out.add(s.oldGroup())));
        return out;
    }

    /**
     * The part of an old group's exported state that {@code source} carries: its tables of unchanged elements,
     * addressed to the pipeline of the new version.
     */
    static StateSnapshot carried(StateSnapshot exported, Source source, String pipelineId) {
        StateSnapshot.Builder b = StateSnapshot.newBuilder().setPipelineId(pipelineId)
                .setGroupId(exported.getGroupId());
        for (StateTable t : exported.getTablesList()) {
            if (source.elements().contains(t.getElement())) {
                b.addTables(t);
            }
        }
        return b.build();
    }

    /**
     * Element declarations of a group config: name to "Class(arguments)" with whitespace runs collapsed. Only
     * declarations with arguments are seen; a stateful element without any has nothing that could change but its
     * class, and is compared as "Class()" when written so.
     */
    static Map<String, String> declarations(String click) {
        Map<String, String> out = new LinkedHashMap<>();
        Matcher m = DECLARATION.matcher(click);
        int from = 0;
        while (m.find(from)) {
            int depth = 1;
            int i = m.end();
            for (; i < click.length() && depth > 0; i++) {
                char c = click.charAt(i);
                depth += c == '(' ? 1 : c == ')' ? -1 : 0;
            }
            String args = click.substring(m.end(), Math.max(m.end(), i - 1)).trim().replaceAll("\\s+", " ");
            out.putIfAbsent(m.group(1), m.group(2) + "(" + args + ")");
            from = i;
        }
        return out;
    }

    @Override
    public String toString() {
        return byNewGroup.toString();
    }
}
