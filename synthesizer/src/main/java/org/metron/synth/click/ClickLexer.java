package org.metron.synth.click;

import org.metron.synth.SynthesisException;

import java.util.ArrayList;
import java.util.List;

/**
 * The Click lexer over one range of a configuration's text: whitespace and comments, identifiers, punctuation
 * and port numbers. Positions are offsets into the whole text, reported as line:col of the whole text: a
 * compound's body is read by a lexer over its own range ({@link #range}) sharing the line table, so every error
 * points into the file as written.
 */
final class ClickLexer {
    private final String src;
    private final int end;
    /** Offset of each line's first character in {@code src}. */
    private final int[] lineStarts;
    private int pos;

    private ClickLexer(String src, int start, int end, int[] lineStarts) {
        this.src = src;
        this.pos = start;
        this.end = end;
        this.lineStarts = lineStarts;
    }

    /** A lexer over the whole text. */
    static ClickLexer of(String text) {
        List<Integer> starts = new ArrayList<>();
        starts.add(0);
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) == '\n') {
                starts.add(i + 1);
            }
        }
        return new ClickLexer(text, 0, text.length(), starts.stream().mapToInt(Integer::intValue).toArray());
    }

    /** A lexer over {@code [start, end)} of the same text. */
    ClickLexer range(int start, int rangeEnd) {
        return new ClickLexer(src, start, rangeEnd, lineStarts);
    }

    // ---- positions and errors ---------------------------------------------------------------------------

    int pos() {
        return pos;
    }

    void seek(int p) {
        pos = p;
    }

    int end() {
        return end;
    }

    char charAt(int p) {
        return src.charAt(p);
    }

    String text(int from, int to) {
        return src.substring(from, to);
    }

    int line(int p) {
        int lo = 0;
        int hi = lineStarts.length - 1;
        while (lo < hi) {
            int mid = (lo + hi + 1) >>> 1;
            if (lineStarts[mid] <= p) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        return lo + 1;
    }

    int column(int p) {
        return p - lineStarts[line(p) - 1] + 1;
    }

    SynthesisException error(int p, String msg) {
        return new SynthesisException(null, null, line(p), column(p), msg);
    }

    /** What comes next, for error messages. */
    String found() {
        skip();
        if (pos >= end) {
            return "end of input";
        }
        return "'" + src.charAt(pos) + "'";
    }

    // ---- tokens -------------------------------------------------------------------------------------------

    /** Skips whitespace and comments. */
    void skip() {
        while (pos < end) {
            char c = src.charAt(pos);
            if (Character.isWhitespace(c)) {
                pos++;
            } else if (c == '/' && pos + 1 < end && src.charAt(pos + 1) == '/') {
                while (pos < end && src.charAt(pos) != '\n') {
                    pos++;
                }
            } else if (c == '/' && pos + 1 < end && src.charAt(pos + 1) == '*') {
                int close = src.indexOf("*/", pos + 2);
                if (close < 0 || close + 2 > end) {
                    throw error(pos, "unterminated /* comment");
                }
                pos = close + 2;
            } else {
                return;
            }
        }
    }

    /** True if a comment starts at {@code p}. */
    boolean commentAt(int p) {
        return src.charAt(p) == '/' && p + 1 < end && (src.charAt(p + 1) == '/' || src.charAt(p + 1) == '*');
    }

    /** True if nothing but whitespace and comments is left. */
    boolean atEnd() {
        skip();
        return pos >= end;
    }

    /** Moves past one character. */
    void advance() {
        pos++;
    }

    boolean peek(String s) {
        skip();
        return src.startsWith(s, pos) && pos + s.length() <= end;
    }

    boolean accept(String s) {
        if (peek(s)) {
            pos += s.length();
            return true;
        }
        return false;
    }

    static boolean wordStart(char c) {
        return Character.isLetter(c) || c == '_' || c == '@';
    }

    private boolean wordChar(int p) {
        char c = src.charAt(p);
        if (c == '/') {
            // '/' joins compound path names (a/b) but never starts a comment
            return p + 1 < end && (wordStart(src.charAt(p + 1)) || Character.isDigit(src.charAt(p + 1)));
        }
        return Character.isLetterOrDigit(c) || c == '_' || c == '@';
    }

    /** Reads an identifier or returns null (position unchanged) if none starts here. */
    String word() {
        skip();
        if (pos >= end || !wordStart(src.charAt(pos))) {
            return null;
        }
        int s = pos;
        while (pos < end && wordChar(pos)) {
            pos++;
        }
        return src.substring(s, pos);
    }

    /** Reads {@code N]} after a '['. */
    int portNumber() {
        skip();
        int s = pos;
        while (pos < end && Character.isDigit(src.charAt(pos))) {
            pos++;
        }
        if (s == pos) {
            throw error(pos, "expected a port number, found " + found());
        }
        if (pos - s > 5) {
            throw error(s, "port number too large");
        }
        int n = Integer.parseInt(src.substring(s, pos));
        if (!accept("]")) {
            throw error(pos, "expected ']' after port number, found " + found());
        }
        return n;
    }
}
