package org.metron.app.rest;

import org.metron.app.api.MetronService;
import org.metron.app.scaling.ScalingService;
import org.metron.app.metrics.ControllerMetrics;
import org.metron.app.metrics.PrometheusText;
import org.onlab.osgi.ServiceNotFoundException;

import javax.ws.rs.GET;
import javax.ws.rs.Path;
import javax.ws.rs.Produces;
import javax.ws.rs.core.Response;

/** Prometheus scrape target: {@code GET /onos/metron/metrics} (the embedded host also mounts it at /metrics). */
@Path("metrics")
public class MetricsWebResource extends MetronWebResource {

    /**
     * The controller's metrics in Prometheus text exposition format 0.0.4 (ControllerMetrics lists them).
     *
     * @return 200 OK, text/plain; version=0.0.4
     */
    @GET
    @Produces(PrometheusText.CONTENT_TYPE)
    @Statuses({200})
    public Response metrics() {
        ScalingService scaling;
        try {
            scaling = get(ScalingService.class);
        } catch (ServiceNotFoundException e) {
            scaling = null;  // a host without scaling still exposes the rest
        }
        return Response.ok(ControllerMetrics.scrape(get(MetronService.class), scaling),
                PrometheusText.CONTENT_TYPE).build();
    }
}
