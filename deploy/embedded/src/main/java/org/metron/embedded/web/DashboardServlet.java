package org.metron.embedded.web;

import org.metron.app.scaling.FlowStateAlert;
import org.metron.app.scaling.ScalingEvent;
import org.metron.app.scaling.ScalingService;
import org.metron.app.api.Chain;
import org.metron.app.api.MetronService;
import org.metron.app.api.Placement;
import org.metron.app.api.RuleInfo;
import org.metron.app.api.ServerInfo;
import org.metron.app.api.TagAllocation;
import org.metron.app.api.TrafficClassInfo;

import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The dashboard: one server-rendered page (no script, reloads itself every 2 s) with chains, traffic classes,
 * tags, per-core load and live rule counters, all read through {@link MetronService} like the REST API. Needs
 * the viewer role (HTTP Basic, same users as the REST API).
 */
public final class DashboardServlet extends HttpServlet {
    private final transient MetronService metron;
    private final transient ScalingService scaling;
    private final transient Credentials credentials;

    public DashboardServlet(MetronService metron, ScalingService scaling, Credentials credentials) {
        this.metron = metron;
        this.scaling = scaling;
        this.credentials = credentials;
    }

    @Override
    protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        Optional<Set<String>> roles = BasicAuthFilter.parse(req.getHeader("Authorization"))
                .flatMap(up -> credentials.authenticate(up[0], up[1]));
        if (roles.isEmpty() || !roles.get().contains("viewer")) {
            resp.setHeader("WWW-Authenticate", "Basic realm=\"metron\"");
            resp.sendError(roles.isEmpty() ? 401 : 403);
            return;
        }
        resp.setContentType("text/html; charset=utf-8");
        PrintWriter w = resp.getWriter();
        w.println("<!doctype html><html><head><meta charset=utf-8><meta http-equiv=refresh content=2>"
                + "<title>Metron</title><style>body{font:14px sans-serif;margin:1.5em}table{border-collapse:collapse;"
                + "margin-bottom:1.5em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}"
                + "th{background:#eef}.bar{background:#4a8;height:10px}</style></head><body>");
        w.println("<h1>Metron</h1>");
        chains(w, metron.chains());
        classes(w, metron.chains());
        tags(w, metron.tags());
        placements(w, metron.placements());
        groups(w, metron.placements());
        load(w, metron.servers());
        scaling(w, scaling.history());
        flowState(w, scaling.flowStateAlerts());
        counters(w, metron.rules(null));
        w.println("</body></html>");
    }

    private static String esc(Object o) {
        return String.valueOf(o).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                .replace("\"", "&quot;");
    }

    private static void table(PrintWriter w, String id, String title, String... headers) {
        w.print("<h2>" + title + "</h2><table id=" + id + "><tr>");
        for (String h : headers) {
            w.print("<th>" + h + "</th>");
        }
        w.println("</tr>");
    }

    private static void row(PrintWriter w, Object... cells) {
        w.print("<tr>");
        for (Object c : cells) {
            w.print("<td>" + esc(c) + "</td>");
        }
        w.println("</tr>");
    }

    private void chains(PrintWriter w, Collection<Chain> chains) {
        table(w, "chains", "Chains", "chain", "state", "version", "reason");
        chains.forEach(c -> row(w, c.id().name(), c.state(), c.version(), c.reason()));
        w.println("</table>");
    }

    private void classes(PrintWriter w, Collection<Chain> chains) {
        table(w, "classes", "Traffic classes", "chain", "class", "match", "group", "tag", "class MAC", "core");
        for (Chain c : chains) {
            List<TrafficClassInfo> tcs;
            try {
                tcs = metron.trafficClasses(c.id());
            } catch (RuntimeException e) {
                continue; // a chain being removed concurrently
            }
            tcs.forEach(tc -> row(w, c.id().name(), tc.classId(), tc.match(), tc.groupId(),
                                  tc.tag() == null ? "-" : tc.tag(),
                                  tc.tag() == null ? "-" : tc.tag().classMac(tc.classId()).toString().toLowerCase(),
                                  tc.needsServer() ? tc.core() : "switch only"));
        }
        w.println("</table>");
    }

    private static void tags(PrintWriter w, Collection<TagAllocation> tags) {
        table(w, "tags", "Tags", "server", "nic", "tag", "chain", "group");
        tags.forEach(t -> row(w, t.server(), t.nic(), t.tag(), t.chainId().name(), t.groupId()));
        w.println("</table>");
    }

    private static void placements(PrintWriter w, Collection<Placement> placements) {
        table(w, "placements", "Placements", "chain", "server", "nic", "offload device", "cores");
        placements.forEach(p -> row(w, p.chainId().name(), p.server(), p.nic(),
                                    p.offloadDevice().map(Object::toString).orElse("-"), p.cores()));
        w.println("</table>");
    }

    /** Each placed group with its tag, core, classes and latest measured load: what scaling splits and merges. */
    private void groups(PrintWriter w, Collection<Placement> placements) {
        table(w, "groups", "Groups", "chain", "group", "tag", "core", "classes", "load");
        for (Placement p : placements) {
            Optional<org.metron.app.scaling.ChainLoad> load = scaling.load(p.chainId());
            p.groups().forEach(g -> row(w, p.chainId().name(), g.groupId(), g.tag(), g.core(), g.classIds(),
                    load.flatMap(c -> c.groups().stream().filter(x -> x.groupId().equals(g.groupId())).findFirst())
                            .map(x -> String.format(java.util.Locale.ROOT, "%.2f", x.load())).orElse("-")));
        }
        w.println("</table>");
    }

    private static void load(PrintWriter w, List<ServerInfo> servers) {
        w.print("<h2>Per-core load</h2><table id=load><tr><th>server</th><th>core</th><th>pipeline</th>"
                + "<th>load</th><th></th></tr>");
        for (ServerInfo s : servers) {
            if (!s.reachable()) {
                row(w, s.id(), "-", "unreachable: " + s.error(), "-", "");
                continue;
            }
            for (ServerInfo.CoreInfo c : s.cores()) {
                w.printf("<tr><td>%s</td><td>%d</td><td>%s</td><td>%.2f</td><td><div class=bar style=\"width:%dpx\">"
                        + "</div></td></tr>%n", esc(s.id()), c.id(), esc(c.pipeline()), c.load(),
                        (int) Math.round(c.load() * 200));
            }
        }
        w.println("</table>");
    }

    private static void scaling(PrintWriter w, java.util.Map<org.metron.app.api.ChainId, List<ScalingEvent>> history) {
        table(w, "scaling", "Scaling history", "time", "chain", "kind", "groups", "cores", "moved classes",
              "outcome", "reaction ms", "steps (ms)", "reason");
        history.values().stream().flatMap(List::stream)
                .sorted(java.util.Comparator.comparingLong(ScalingEvent::atMs).reversed())
                .forEach(e -> row(w, java.time.Instant.ofEpochMilli(e.atMs()), e.chain().name(), e.kind(),
                                  String.join("+", e.groups()), e.coresBefore() + " -> " + e.coresAfter(), e.moved(),
                                  e.outcome() + (e.detail().isEmpty() ? "" : ": " + e.detail()), e.reactionMs(),
                                  e.steps(), e.reason()));
        w.println("</table>");
    }

    private static void flowState(PrintWriter w, List<FlowStateAlert> alerts) {
        table(w, "flowstate", "Flow state shed (stateful elements whose table was full)", "time", "chain", "group",
              "server", "element", "evicted", "refused", "growths failed", "flows held / capacity");
        for (int i = alerts.size() - 1; i >= 0; i--) {
            FlowStateAlert a = alerts.get(i);
            row(w, java.time.Instant.ofEpochMilli(a.atMs()), a.chain().name(), a.group(), a.server(), a.element(),
                a.evicted(), a.refused(), a.growthFailures(), a.flows() + " / " + a.capacity());
        }
        w.println("</table>");
    }

    private static void counters(PrintWriter w, List<RuleInfo> rules) {
        table(w, "counters", "Live rule counters", "chain", "role", "device", "priority", "packets", "bytes");
        rules.forEach(r -> row(w, r.chainId().name(), r.role(), r.rule().deviceId(), r.rule().priority(),
                               r.packets(), r.bytes()));
        w.println("</table>");
    }
}
