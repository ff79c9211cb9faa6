/** The stand-in's cluster mode: an Atomix 3.1.9 member embedded in each Karaf node (core-primitives' AtomixManager). */
package org.metron.standin.cluster;
