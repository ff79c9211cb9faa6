/**
 * JSON codecs of Metron's values, one {@link org.onosproject.codec.JsonCodec} a type, registered with ONOS's
 * CodecService ({@link org.metron.app.rest.codec.MetronCodecs}): what REST, the CLI's --json and the embedded host
 * answer. Switch rules inside them are ONOS's own FlowRule codec's JSON, as /onos/v1/flows gives.
 */
package org.metron.app.rest.codec;
