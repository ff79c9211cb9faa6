/**
 * The ONOS device provider for Metron servers: netcfg-declared agents become SERVER devices with their NICs as
 * ports, links to switches and availability that follows the agent.
 */
package org.metron.drivers.provider;
