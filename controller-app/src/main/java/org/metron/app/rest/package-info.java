/**
 * Northbound REST API under /onos/metron: thin resources over {@link org.metron.app.api.MetronService}, encoding
 * through the ONOS codecs of {@code rest.codec}.
 */
package org.metron.app.rest;
