/** Metron's northbound service and the immutable value types it speaks in. */
package org.metron.app.api;
