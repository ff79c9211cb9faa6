/** ONOS GUI view "Metron": chains, traffic classes with tags and cores, server core load. */
package org.metron.app.gui;
