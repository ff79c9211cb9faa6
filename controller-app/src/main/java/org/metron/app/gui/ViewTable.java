package org.metron.app.gui;

import org.metron.app.api.MetronService;
import org.metron.app.scaling.ScalingService;
import org.onosproject.ui.table.TableModel;

import java.util.List;
import java.util.Objects;

/**
 * One table operators read: the ONOS GUI's Metron view and the embedded host's dashboard show the same rows,
 * filled by the same code with values formatted by {@link org.metron.app.rest.MetronText}. Every cell is a
 * string; the first column is the row key, and a column titled "" is not shown.
 */
public final class ViewTable {
    /** Fills a table's rows. */
    @FunctionalInterface
    interface Filler {
        void fill(MetronService metron, ScalingService scaling, TableModel table);
    }

    private final String id;
    private final String title;
    private final List<String> columns;
    private final List<String> headers;
    private final String empty;
    private final Filler filler;

    /**
     * @param id      table id (ONOS table protocol tag "metron" + id)
     * @param columns column ids and their titles, alternating; the first is the row key; "" = not shown
     */
    ViewTable(String id, String title, String empty, Filler filler, String... columns) {
        this.id = Objects.requireNonNull(id);
        this.title = Objects.requireNonNull(title);
        this.empty = Objects.requireNonNull(empty);
        this.filler = Objects.requireNonNull(filler);
        String[] ids = new String[columns.length / 2];
        String[] titles = new String[columns.length / 2];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = columns[2 * i];
            titles[i] = columns[2 * i + 1];
        }
        this.columns = List.of(ids);
        this.headers = List.of(titles);
    }

    public String id() {
        return id;
    }

    public String title() {
        return title;
    }

    /** Column ids; the first is the row key. */
    public List<String> columns() {
        return columns;
    }

    /** Column titles for people, same order as {@link #columns()}. */
    public List<String> headers() {
        return headers;
    }

    /** What the table says when it has no rows. */
    public String empty() {
        return empty;
    }

    /** A new model with this table's columns. */
    public TableModel model() {
        return new TableModel(columns.toArray(new String[0]));
    }

    /** Adds the current rows to a model of this table's columns. */
    public void fill(MetronService metron, ScalingService scaling, TableModel table) {
        filler.fill(metron, scaling, table);
    }

    /** The current rows. */
    public TableModel rows(MetronService metron, ScalingService scaling) {
        TableModel t = model();
        fill(metron, scaling, t);
        return t;
    }
}
