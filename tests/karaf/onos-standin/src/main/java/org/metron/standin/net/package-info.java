/** Stand-ins for core-net's network subsystems: config, devices, links, topology, drivers, flows, hosts. */
package org.metron.standin.net;
