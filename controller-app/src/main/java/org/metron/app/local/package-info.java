/**
 * Single-instance implementations of the SPI parts that need no network: a Kryo-encoding local map, its store
 * factory and leadership that always answers "this instance". Used by the embedded host and by tests.
 */
package org.metron.app.local;
