/**
 * Stand-in for ONOS 2.7.0's OpenFlow providers (device, flow rule, flow statistics) and the LLDP link discovery its
 * OpenFlow app brings, on the project's own OpenFlow 1.3 southbound (org.metron.openflow).
 */
package org.metron.standin.openflow;
