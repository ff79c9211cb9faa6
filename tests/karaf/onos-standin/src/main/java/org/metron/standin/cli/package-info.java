/** Console commands of the stand-in: what the test reads of stood-in services that ONOS's CLI does not show. */
package org.metron.standin.cli;
