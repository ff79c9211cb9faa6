/** Names shared between the Metron drivers, the optional P4 tagging app and the controller app. */
package org.metron.drivers.tagging;
