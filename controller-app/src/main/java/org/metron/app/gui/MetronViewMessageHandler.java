package org.metron.app.gui;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.common.collect.ImmutableSet;
import org.metron.app.api.MetronService;
import org.metron.app.scaling.ScalingService;
import org.onosproject.ui.RequestHandler;
import org.onosproject.ui.UiMessageHandler;
import org.onosproject.ui.table.TableModel;
import org.onosproject.ui.table.TableRequestHandler;

import java.util.Collection;
import java.util.function.Consumer;

/** Serves the Metron view's tables (ONOS table protocol: xDataRequest → xDataResponse with rows "xs"). */
public class MetronViewMessageHandler extends UiMessageHandler {
    private final MetronService metron;
    private final ScalingService scaling;

    public MetronViewMessageHandler(MetronService metron, ScalingService scaling) {
        this.metron = metron;
        this.scaling = scaling;
    }

    @Override
    protected Collection<RequestHandler> createRequestHandlers() {
        return ImmutableSet.of(
                new Table("metronChain", "metronChains", MetronTables.CHAIN_COLUMNS, "name", "No chains",
                        t -> MetronTables.chains(metron, t)),
                new Table("metronClass", "metronClasss", MetronTables.CLASS_COLUMNS, "id", "No traffic classes",
                        t -> MetronTables.classes(metron, t)),
                new Table("metronCore", "metronCores", MetronTables.CORE_COLUMNS, "id", "No Metron servers",
                        t -> MetronTables.cores(metron, t)),
                new Table("metronGroup", "metronGroups", ScalingTables.GROUP_COLUMNS, "id", "No placed groups",
                        t -> ScalingTables.groups(metron, scaling, t)),
                new Table("metronScaling", "metronScalings", ScalingTables.HISTORY_COLUMNS, "id",
                        "No scaling decisions yet", t -> ScalingTables.history(scaling, t)));
    }

    /** One table of the view. */
    private final class Table extends TableRequestHandler {
        private final String[] columns;
        private final String key;
        private final String empty;
        private final Consumer<TableModel> fill;

        Table(String tag, String rows, String[] columns, String key, String empty, Consumer<TableModel> fill) {
            super(tag + "DataRequest", tag + "DataResponse", rows);
            this.columns = columns;
            this.key = key;
            this.empty = empty;
            this.fill = fill;
        }

        @Override
        protected String[] getColumnIds() {
            return columns;
        }

        @Override
        protected String defaultColumnId() {
            return key;
        }

        @Override
        protected String noRowsMessage(ObjectNode payload) {
            return empty;
        }

        @Override
        protected void populateTable(TableModel tm, ObjectNode payload) {
            fill.accept(tm);
        }
    }
}
