/**
 * The Metron tagging pipeline for P4Runtime switches: the P4 program's names, its pipeconf, the interpreter
 * mapping Metron's flow rules to the {@code tagger} table and its entry translator. An app of its own
 * ({@code org.metron.drivers.p4}), installed only where P4Runtime switches tag traffic.
 */
package org.metron.drivers.p4;
