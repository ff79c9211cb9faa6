package org.metron.app.gui;

import org.metron.app.api.Chain;
import org.metron.app.api.ChainId;
import org.metron.app.api.MetronService;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.TrafficClassInfo;
import org.onosproject.ui.table.TableModel;

import java.util.stream.Collectors;

/** Fills the view's three tables from {@link MetronService}; the message handler only routes requests here. */
final class MetronTables {
    static final String[] CHAIN_COLUMNS = {"name", "state", "ingress", "egress", "tagType", "cores", "server",
        "reason"};
    static final String[] CLASS_COLUMNS = {"id", "chain", "classId", "match", "group", "tag", "core"};
    static final String[] CORE_COLUMNS = {"id", "server", "core", "load", "chain"};

    private MetronTables() {
    }

    static void chains(MetronService m, TableModel t) {
        for (Chain c : m.chains()) {
            t.addRow().cell("name", c.id().name()).cell("state", c.state().name())
                    .cell("ingress", c.deployment().ingressPoint().toString())
                    .cell("egress", c.deployment().egressPoint().toString())
                    .cell("tagType", c.deployment().tagType().name()).cell("cores", c.deployment().cpuCores())
                    .cell("server", m.placement(c.id()).map(p -> p.server().map(Object::toString).orElse("none (offloaded)"))
                            .orElse("-"))
                    .cell("reason", c.reason());
        }
    }

    static void classes(MetronService m, TableModel t) {
        for (ChainId id : m.placements().stream().map(p -> p.chainId()).sorted().collect(Collectors.toList())) {
            for (TrafficClassInfo tc : m.trafficClasses(id)) {
                t.addRow().cell("id", id + "/" + tc.classId()).cell("chain", id.name()).cell("classId", tc.classId())
                        .cell("match", tc.match()).cell("group", tc.groupId().isEmpty() ? "-" : tc.groupId())
                        .cell("tag", tc.tag() == null ? "-" : tc.tag().classMac(tc.classId()).toString()
                                .toLowerCase() + (tc.tag().type() == org.metron.app.api.TagType.VLAN
                                ? " vlan " + tc.tag().group() : ""))
                        .cell("core", tc.core() < 0 ? "-" : Integer.toString(tc.core()));
            }
        }
    }

    static void cores(MetronService m, TableModel t) {
        for (ServerInfo s : m.servers()) {
            for (ServerInfo.CoreInfo c : s.cores()) {
                t.addRow().cell("id", s.id() + "/" + c.id()).cell("server", s.id().toString()).cell("core", c.id())
                        .cell("load", String.format("%.0f%%", 100 * c.load()))
                        .cell("chain", c.pipeline().isEmpty() ? "-" : c.pipeline());
            }
        }
    }
}
