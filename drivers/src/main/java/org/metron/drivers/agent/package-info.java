/**
 * Client side of the controller-agent contract ({@code agent/proto/metron/agent/v1/agent.proto}).
 * {@link org.metron.drivers.agent.AgentClient} is the only way Metron's Java code talks to an agent; the
 * message types are the classes generated from the proto into {@code org.metron.agent.v1}.
 */
package org.metron.drivers.agent;
