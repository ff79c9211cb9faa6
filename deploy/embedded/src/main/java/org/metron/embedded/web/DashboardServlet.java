package org.metron.embedded.web;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.metron.app.api.MetronService;
import org.metron.app.gui.MetronTables;
import org.metron.app.gui.ViewTable;
import org.metron.app.rest.MetronText;
import org.metron.app.scaling.ScalingService;
import org.metron.app.spi.NetworkView;
import org.metron.embedded.net.NetworkFile;
import org.onosproject.net.ConnectPoint;
import org.onosproject.ui.table.TableModel;

import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The dashboard: a page that polls and redraws itself (plain JavaScript shipped here, nothing fetched from
 * elsewhere, so it works offline). It draws per-chain and per-core packet rates over time and the topology
 * from the REST API, and shows the tables of the ONOS GUI's Metron view ({@link MetronTables#ALL}, the same
 * rows, formatted by the same code) from {@code tables.json}; {@code topology.json} is the emulated network
 * (switches, servers, hosts and their cabling) the REST API does not describe. Needs the viewer role (HTTP
 * Basic, the same users as the REST API).
 */
public final class DashboardServlet extends HttpServlet {
    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** The page's static files: name → content type. */
    private static final Map<String, String> FILES = Map.of("index.html", "text/html; charset=utf-8",
            "dashboard.js", "application/javascript; charset=utf-8", "dashboard.css", "text/css; charset=utf-8");

    private final transient MetronService metron;
    private final transient ScalingService scaling;
    private final transient Credentials credentials;
    private final transient NetworkFile network;
    private final transient NetworkView view;

    /**
     * @param network the topology's cabling
     * @param view    which of its devices are up now
     */
    public DashboardServlet(MetronService metron, ScalingService scaling, Credentials credentials,
                            NetworkFile network, NetworkView view) {
        this.metron = metron;
        this.scaling = scaling;
        this.credentials = credentials;
        this.network = network;
        this.view = view;
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
        String path = req.getPathInfo() == null || req.getPathInfo().equals("/") ? "index.html"
                : req.getPathInfo().substring(1);
        resp.setHeader("Cache-Control", "no-store");
        switch (path) {
            case "tables.json":
                json(resp, tables());
                return;
            case "topology.json":
                json(resp, topology());
                return;
            default:
                String type = FILES.get(path);
                if (type == null) {
                    resp.sendError(404);
                    return;
                }
                resp.setContentType(type);
                try (InputStream in = DashboardServlet.class.getResourceAsStream(path)) {
                    in.transferTo(resp.getOutputStream());
                }
        }
    }

    private static void json(HttpServletResponse resp, ObjectNode body) throws IOException {
        resp.setContentType("application/json; charset=utf-8");
        MAPPER.writeValue(resp.getOutputStream(), body);
    }

    /** Every view table: id, title, what it says when empty, the shown columns' titles and the rows' cells. */
    private ObjectNode tables() {
        ObjectNode root = MAPPER.createObjectNode();
        root.put("at", System.currentTimeMillis());
        ArrayNode tables = root.putArray("tables");
        for (ViewTable t : MetronTables.ALL) {
            ObjectNode tn = tables.addObject();
            tn.put("id", t.id());
            tn.put("title", t.title());
            tn.put("empty", t.empty());
            ArrayNode cols = tn.putArray("columns");
            ArrayNode headers = tn.putArray("headers");
            List<String> shown = new ArrayList<>();
            for (int i = 0; i < t.columns().size(); i++) {
                if (!t.headers().get(i).isEmpty()) {
                    shown.add(t.columns().get(i));
                    cols.add(t.columns().get(i));
                    headers.add(t.headers().get(i));
                }
            }
            ArrayNode rows = tn.putArray("rows");
            TableModel model;
            try {
                model = t.rows(metron, scaling);
            } catch (RuntimeException e) {
                tn.put("error", e.getMessage()); // e.g. a chain removed while its rows were read: next poll
                continue;
            }
            for (TableModel.Row r : model.getRows()) {
                ArrayNode cells = rows.addArray();
                shown.forEach(c -> cells.add(Objects.toString(r.get(c), MetronText.NONE)));
            }
        }
        return root;
    }

    /** The network: switches (and whether connected), servers with their NICs' cabling, hosts, links. */
    private ObjectNode topology() {
        ObjectNode root = MAPPER.createObjectNode();
        ArrayNode switches = root.putArray("switches");
        network.switches.forEach((name, id) -> switches.addObject().put("id", id.toString()).put("name", name)
                .put("up", view.device(id).isPresent()));
        ArrayNode servers = root.putArray("servers");
        for (NetworkFile.Server s : network.servers) {
            ObjectNode sn = servers.addObject().put("id", s.id.toString()).put("name", s.name)
                    .put("agent", s.agent.orElse(""));
            ObjectNode nics = sn.putObject("nics");
            s.attachments.forEach((nic, at) -> nics.put(nic, at.toString()));
        }
        ArrayNode hosts = root.putArray("hosts");
        network.hosts.forEach(h -> hosts.addObject().put("name", h.name).put("ip", h.ip).put("mac", h.mac)
                .put("at", h.attachment.toString()));
        ArrayNode links = root.putArray("links");
        for (List<ConnectPoint> l : network.links) {
            links.addArray().add(l.get(0).toString()).add(l.get(1).toString());
        }
        ArrayNode ingress = root.putArray("ingress");
        network.ingress.forEach(p -> ingress.add(p.toString()));
        ArrayNode egress = root.putArray("egress");
        network.egress.forEach(p -> egress.add(p.toString()));
        return root;
    }
}
