/** StorageService stand-in: single-instance consistent maps that keep keys and values Kryo-encoded. */
package org.metron.standin.store;
