/**
 * Metron's core, in plain classes over the SPI: the chain lifecycle ({@link org.metron.app.impl.ChainManager}),
 * placement, tags, rule planning and deployment with rollback.
 */
package org.metron.app.impl;
