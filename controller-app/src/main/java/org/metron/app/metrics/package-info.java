/**
 * Prometheus metrics of the controller: {@link org.metron.app.metrics.ControllerMetrics} reads Metron's and
 * scaling's services into the text exposition format ({@link org.metron.app.metrics.PrometheusText}), served by
 * {@link org.metron.app.rest.MetricsWebResource} at {@code /onos/metron/metrics} in ONOS and in the embedded
 * host (which also serves it at {@code /metrics}).
 */
package org.metron.app.metrics;
