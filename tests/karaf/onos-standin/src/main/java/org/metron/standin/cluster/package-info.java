/**
 * The stand-in's cluster mode: each Karaf node an Atomix 3.1.9 member of the cluster whose separate storage members
 * hold the Raft partitions (core-primitives' AtomixManager with storage nodes).
 */
package org.metron.standin.cluster;
