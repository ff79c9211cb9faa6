/**
 * The Metron tagging pipeline for P4Runtime switches: the P4 program's names, its pipeconf, the interpreter
 * mapping Metron's flow rules to the {@code tagger} table, and the P4Runtime encoding and writer of its
 * entries.
 */
package org.metron.drivers.p4;
