/**
 * Thin OSGi components: each adapts ONOS services to one SPI interface of {@code org.metron.app.spi}, and
 * {@link org.metron.app.onos.MetronComponent} wires the core. No Metron logic lives here.
 */
package org.metron.app.onos;
