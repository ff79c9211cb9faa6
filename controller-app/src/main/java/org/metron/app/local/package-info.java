/**
 * Single-instance implementations of the SPI parts that need no network: a Kryo-encoding local map, its store
 * factory, leadership that always answers "this instance", and the CoreService of a host running one application
 * (what ONOS's FlowRule codec asks). Used by the embedded host and by tests.
 */
package org.metron.app.local;
