/** Stand-in for ONOS 2.7.0's OpenFlow providers, on the project's own OpenFlow 1.3 southbound (org.metron.openflow). */
package org.metron.standin.openflow;
