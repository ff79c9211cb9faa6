package org.metron.app.api;

import java.util.regex.Pattern;

/**
 * The rules the REST API checks requests by, each in one place: validation ({@link ChainId}, {@code ChainRequests},
 * the resources) applies these constants and the API document states them (rest/ApiDocument writes them into the
 * chain body's schema and the path and query parameters), so a client generating requests from the document sends
 * what the API accepts. Patterns are anchored regular expressions, valid as Java and as ECMA 262 (JSON Schema).
 * ApiValidationAgreementTest probes both with the same generated values.
 */
public final class RequestRules {
    /** A chain id (path parameters): letters, digits, '_', '.', '-', a letter or digit first, at most 64. */
    public static final String CHAIN_ID = "^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$";
    /**
     * The name in a chain body: a name the synthesizer reads (a letter or '_' first, then letters, digits, '_', '-')
     * that is also a chain id: a letter first, at most 64.
     */
    public static final String CHAIN_NAME = "^[A-Za-z][A-Za-z0-9_-]{0,63}$";
    /**
     * A deployment's connect point as ONOS writes one: device id (scheme:rest), '/', port number. What ONOS's
     * {@code ConnectPoint.deviceConnectPoint} reads beyond this (named or logical ports) is not a chain's point.
     */
    /** A device id as a path segment names a server ("metron:srv1"): scheme, colon, id. */
    public static final String DEVICE_ID = "^[a-z][a-z0-9+.-]*:[A-Za-z0-9._:-]+$";
    public static final String CONNECT_POINT = "^[a-z][a-z0-9+.-]*:[A-Za-z0-9._:-]+/[0-9]{1,10}$";
    /** A next hop's MAC: six colon-separated hex bytes, unicast (group bit clear), not all zero. */
    public static final String UNICAST_MAC = "^(?!00:00:00:00:00:00$)[0-9A-Fa-f][02468AaCcEe](:[0-9A-Fa-f]{2}){5}$";
    /** Six colon-separated hex bytes (what {@link #UNICAST_MAC} further restricts). */
    private static final Pattern MAC_RE = Pattern.compile("^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$");
    /** The largest count (cores, NICs) a deployment may name: counts are Java ints. */
    public static final int MAX_COUNT = Integer.MAX_VALUE;

    private static final Pattern CHAIN_ID_RE = Pattern.compile(CHAIN_ID);
    private static final Pattern CHAIN_NAME_RE = Pattern.compile(CHAIN_NAME);
    private static final Pattern CONNECT_POINT_RE = Pattern.compile(CONNECT_POINT);
    private static final Pattern DEVICE_ID_RE = Pattern.compile(DEVICE_ID);
    private static final Pattern UNICAST_MAC_RE = Pattern.compile(UNICAST_MAC);

    private RequestRules() {
    }

    public static boolean chainId(String s) {
        return s != null && CHAIN_ID_RE.matcher(s).matches();
    }

    public static boolean chainName(String s) {
        return s != null && CHAIN_NAME_RE.matcher(s).matches();
    }

    /** Whether {@code s} is a MAC address at all (six hex bytes), unicast or not. */
    public static boolean mac(String s) {
        return s != null && MAC_RE.matcher(s).matches();
    }

    public static boolean deviceId(String s) {
        return s != null && DEVICE_ID_RE.matcher(s).matches();
    }

    public static boolean connectPoint(String s) {
        return s != null && CONNECT_POINT_RE.matcher(s).matches();
    }

    public static boolean unicastMac(String s) {
        return s != null && UNICAST_MAC_RE.matcher(s).matches();
    }

    /**
     * A query parameter the operation needs: present and not empty.
     *
     * @throws MetronException INVALID_CHAIN (422, as the operation's other refusals) naming the parameter
     */
    public static String required(String name, String value, String operation) {
        if (value == null || value.isEmpty()) {
            throw new MetronException(MetronException.Fault.INVALID_CHAIN, operation + ": query parameter '"
                    + name + "' missing");
        }
        return value;
    }
}
