/** ONOS's application subsystem, stood in for over onos-core-common's real ApplicationArchive. */
package org.metron.standin.app;
