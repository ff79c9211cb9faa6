/** Northbound REST API under /onos/metron: thin resources over {@link org.metron.app.api.MetronService}. */
package org.metron.app.rest;
