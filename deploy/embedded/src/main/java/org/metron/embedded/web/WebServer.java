package org.metron.embedded.web;

import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.HandlerList;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;
import org.glassfish.jersey.server.ResourceConfig;
import org.glassfish.jersey.servlet.ServletContainer;
import org.metron.app.rest.MetricsWebResource;
import org.metron.app.rest.MetronWebApplication;
import org.metron.app.rest.MetronWebResource;

import java.net.InetSocketAddress;

/**
 * The embedded host's HTTP server: the controller-app's own REST application (same resources, same paths
 * under /onos/metron as inside ONOS) behind Basic authentication, the dashboard under /metron/ui, and the
 * Prometheus metrics (the same resource as /onos/metron/metrics, behind the same authentication) at /metrics,
 * where scrape configurations look by default.
 */
public final class WebServer implements AutoCloseable {
    public static final String REST_PATH = "/onos/metron";
    public static final String UI_PATH = "/metron/ui";

    private final Server server;

    /**
     * @param services what the REST resources may look up (MetronService, ScalingService)
     */
    public WebServer(InetSocketAddress address, HostServices services, Credentials credentials,
                     javax.servlet.http.HttpServlet dashboard) {
        server = new Server(address);
        ResourceConfig rest = ResourceConfig.forApplication(new MetronWebApplication())
                .register(new BasicAuthFilter(credentials))
                .property(MetronWebResource.SERVICES, services);
        ServletContextHandler api = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
        api.setContextPath(REST_PATH);
        api.addServlet(new ServletHolder(new ServletContainer(rest)), "/*");
        ServletContextHandler ui = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
        ui.setContextPath(UI_PATH);
        ui.addServlet(new ServletHolder(dashboard), "/*");
        // Last: a context at "/" takes every path the others left.
        ServletContextHandler metrics = new ServletContextHandler(ServletContextHandler.NO_SESSIONS);
        metrics.setContextPath("/");
        metrics.addServlet(new ServletHolder(new ServletContainer(new ResourceConfig(MetricsWebResource.class)
                .register(new BasicAuthFilter(credentials))
                .property(MetronWebResource.SERVICES, services))), "/*");
        HandlerList handlers = new HandlerList();
        handlers.addHandler(api);
        handlers.addHandler(ui);
        handlers.addHandler(metrics);
        server.setHandler(handlers);
    }

    public void start() throws Exception {
        server.start();
    }

    public int port() {
        return ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    }

    @Override
    public void close() throws Exception {
        server.stop();
    }
}
