/** Metron's distributed state: the five maps, their Kryo namespace and the ConsistentMap adapter. */
package org.metron.app.store;
