/**
 * The ONOS "metron-server" driver: ONOS behaviours implemented over the agent's gRPC API
 * ({@link org.metron.drivers.agent.AgentClient}), and the loader registering them from
 * {@code metron-drivers.xml}.
 */
package org.metron.drivers.server;
