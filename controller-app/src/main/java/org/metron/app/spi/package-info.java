/**
 * The narrow interfaces Metron's core needs from its environment. Inside ONOS they are implemented by thin OSGi
 * adapters over ONOS services ({@code org.metron.app.onos}); the embedded single-machine host implements them
 * against real OVS and real agents. Each interface documents what an implementation must guarantee; the core
 * relies on nothing else.
 */
package org.metron.app.spi;
