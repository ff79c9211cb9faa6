package org.metron.app.impl;

/** Shares the netcfg sample with tests in other packages. */
public final class NetcfgTranslatorTestAccess {
    public static final String NETCFG = NetcfgTranslatorTest.NETCFG;

    private NetcfgTranslatorTestAccess() {
    }
}
