/** Karaf commands over {@link org.metron.app.api.MetronService}: metron-chains, metron-chain-add, ... */
package org.metron.app.cli;
