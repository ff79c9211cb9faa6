// Recursive-descent parser for Click configurations (see click_ast.h for the accepted language).
#include <cctype>
#include <map>

#include "core/click_ast.h"

namespace metron {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '@'; }
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '@' || c == '/';
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

class Parser {
 public:
  Parser(const std::string& text, bool allow_ports) : s_(text), allow_ports_(allow_ports) {}

  ClickConfig run() {
    skip_space();
    while (!eof()) {
      if (peek() == ';') {
        advance();
      } else {
        statement();
        skip_space();
        if (!eof()) {
          if (peek() != ';') fail(pos_, std::string("expected ';' or '->', found ") + describe_here());
          advance();
        }
      }
      skip_space();
    }
    return std::move(out_);
  }

 private:
  // ---- character level --------------------------------------------------------------------------------------
  bool eof() const { return i_ >= s_.size(); }
  char peek(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  void advance() {
    if (s_[i_] == '\n') {
      ++pos_.line;
      pos_.col = 1;
    } else {
      ++pos_.col;
    }
    ++i_;
  }
  [[noreturn]] void fail(SourcePos p, const std::string& msg) { throw ClickError(p, msg); }

  std::string describe_here() const {
    if (eof()) return "end of input";
    if (peek() == '-' && peek(1) == '>') return "'->'";
    if (peek() == ':' && peek(1) == ':') return "'::'";
    if (ident_start(peek())) {
      size_t j = i_;
      while (j < s_.size() && ident_char(s_[j])) ++j;
      return "'" + s_.substr(i_, j - i_) + "'";
    }
    return std::string("'") + peek() + "'";
  }

  // Skips whitespace and comments; an unterminated block comment is an error at its start.
  void skip_space() {
    for (;;) {
      while (!eof() && std::isspace(static_cast<unsigned char>(peek()))) advance();
      if (peek() == '/' && peek(1) == '/') {
        while (!eof() && peek() != '\n') advance();
      } else if (peek() == '/' && peek(1) == '*') {
        SourcePos start = pos_;
        advance();
        advance();
        while (!eof() && !(peek() == '*' && peek(1) == '/')) advance();
        if (eof()) fail(start, "unterminated comment");
        advance();
        advance();
      } else if (peek() == '#' && pos_.col == 1) {
        while (!eof() && peek() != '\n') advance();  // preprocessor-style line (#include, #define): ignored
      } else {
        return;
      }
    }
  }

  bool at(const char* tok) const { return s_.compare(i_, std::char_traits<char>::length(tok), tok) == 0; }

  std::string ident() {
    if (!ident_start(peek())) fail(pos_, "expected an element name or class, found " + describe_here());
    size_t b = i_;
    while (!eof() && ident_char(peek())) {
      if (peek() == '/' && (peek(1) == '/' || peek(1) == '*')) break;  // a comment right after a name
      advance();
    }
    return s_.substr(b, i_ - b);
  }

  int port_number() {
    SourcePos start = pos_;
    advance();  // '['
    skip_space();
    if (!std::isdigit(static_cast<unsigned char>(peek())))
      fail(pos_, "expected a port number after '[', found " + describe_here());
    long v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (peek() - '0');
      if (v > 65535) fail(start, "port number too large");
      advance();
    }
    skip_space();
    if (peek() != ']') fail(pos_, "expected ']' to close the port opened at " + std::to_string(start.line) + ":" +
                                      std::to_string(start.col) + ", found " + describe_here());
    advance();
    return static_cast<int>(v);
  }

  // Reads a balanced "( ... )" configuration string and splits it into arguments.
  std::vector<std::string> config_args(SourcePos* where) {
    SourcePos open = pos_;
    advance();  // '('
    *where = pos_;
    std::vector<std::string> args;
    std::string cur;
    int depth = 0;
    bool any = false;
    for (;;) {
      if (eof()) fail(open, "unterminated '(': configuration string never closed");
      char c = peek();
      if (c == '"' || c == '\'') {
        SourcePos q = pos_;
        char quote = c;
        cur += c;
        advance();
        while (!eof() && peek() != quote) {
          if (peek() == '\\' && quote == '"') {
            cur += peek();
            advance();
            if (eof()) break;
          }
          cur += peek();
          advance();
        }
        if (eof()) fail(q, "unterminated string");
        cur += peek();
        advance();
        any = true;
        continue;
      }
      if (c == '/' && (peek(1) == '/' || peek(1) == '*')) {
        skip_space();
        cur += ' ';
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) {
          if (c != ')') fail(pos_, std::string("unbalanced '") + c + "' in configuration string");
          advance();
          break;
        }
        --depth;
      }
      if (c == ',' && depth == 0) {
        args.push_back(trim(cur));
        cur.clear();
        any = true;
        advance();
        continue;
      }
      if (!std::isspace(static_cast<unsigned char>(c))) any = true;
      cur += c;
      advance();
    }
    std::string last = trim(cur);
    if (!last.empty() || !args.empty()) args.push_back(last);
    (void)any;
    return args;
  }

  int add_element(ElementDecl d) {
    auto it = declared_.find(d.name);
    if (it != declared_.end()) {
      const SourcePos p = out_.elements[it->second].pos;
      fail(d.pos, "redeclaration of element '" + d.name + "' (first declared at " + std::to_string(p.line) + ":" +
                      std::to_string(p.col) + ")");
    }
    out_.elements.push_back(std::move(d));
    int idx = static_cast<int>(out_.elements.size()) - 1;
    declared_[out_.elements.back().name] = idx;
    return idx;
  }

  int anonymous(const std::string& cls, SourcePos p, std::vector<std::string> args, SourcePos args_pos) {
    ElementDecl d;
    d.cls = cls;
    d.name = cls + "@" + std::to_string(out_.elements.size() + 1);
    d.args = std::move(args);
    d.pos = p;
    d.args_pos = args_pos;
    d.anonymous = true;
    return add_element(std::move(d));
  }

  int pseudo_port(const std::string& which, SourcePos p) {
    auto it = declared_.find(which);
    if (it != declared_.end()) return it->second;
    ElementDecl d;
    d.name = which;
    d.cls = which;
    d.pos = p;
    return add_element(std::move(d));
  }

  // element := name '::' Class [config] | Class config | name | Class
  int element() {
    SourcePos p = pos_;
    std::string name = ident();
    skip_space();
    if (at("::")) {
      advance();
      advance();
      skip_space();
      SourcePos cp = pos_;
      std::string cls = ident();
      if (cls == "input" || cls == "output") fail(cp, "'" + cls + "' is not an element class");
      skip_space();
      ElementDecl d;
      d.name = name;
      d.cls = cls;
      d.pos = p;
      d.args_pos = pos_;
      if (peek() == '(') d.args = config_args(&d.args_pos);
      if (name == "input" || name == "output") fail(p, "'" + name + "' is reserved for the group's ports");
      return add_element(std::move(d));
    }
    if (peek() == '(') {
      if (declared_.count(name)) fail(p, "'" + name + "' is an element, not a class: it takes no configuration");
      SourcePos ap;
      auto args = config_args(&ap);
      return anonymous(name, p, std::move(args), ap);
    }
    auto it = declared_.find(name);
    if (it != declared_.end()) return it->second;
    if (name == "input" || name == "output") {
      if (!allow_ports_) fail(p, "'" + name + "' is only allowed in a group configuration");
      return pseudo_port(name, p);
    }
    return anonymous(name, p, {}, pos_);
  }

  void statement() {
    SourcePos p = pos_;
    if (ident_start(peek())) {
      size_t save_i = i_;
      SourcePos save_pos = pos_;
      std::string word = ident();
      skip_space();
      if (word == "elementclass") fail(p, "'elementclass' (compound elements) is not supported");
      if (word == "require" && peek() == '(') {
        SourcePos ap;
        config_args(&ap);
        return;
      }
      if (peek() == ',') {  // a, b, c :: Class(args)
        std::vector<std::pair<std::string, SourcePos>> names{{word, p}};
        while (peek() == ',') {
          advance();
          skip_space();
          SourcePos np = pos_;
          names.emplace_back(ident(), np);
          skip_space();
        }
        if (!at("::")) fail(pos_, "expected '::' after the element names, found " + describe_here());
        advance();
        advance();
        skip_space();
        std::string cls = ident();
        skip_space();
        std::vector<std::string> args;
        SourcePos ap = pos_;
        if (peek() == '(') args = config_args(&ap);
        for (auto& [n, np] : names) {
          if (n == "input" || n == "output") fail(np, "'" + n + "' is reserved for the group's ports");
          ElementDecl d;
          d.name = n;
          d.cls = cls;
          d.args = args;
          d.pos = np;
          d.args_pos = ap;
          add_element(std::move(d));
        }
        return;
      }
      i_ = save_i;
      pos_ = save_pos;
    }
    chain();
  }

  void chain() {
    int in_port = 0;
    skip_space();
    if (peek() == '[') fail(pos_, "a connection cannot start with an input port");
    int prev = element();
    skip_space();
    int out_port = 0;
    if (peek() == '[') {
      out_port = port_number();
      skip_space();
    }
    while (at("->") || at("=>")) {
      if (at("=>")) fail(pos_, "'=>' is not supported; use '->'");
      SourcePos arrow = pos_;
      advance();
      advance();
      skip_space();
      in_port = 0;
      if (peek() == '[') {
        in_port = port_number();
        skip_space();
      }
      if (eof() || peek() == ';') fail(arrow, "'->' must be followed by an element");
      int next = element();
      out_.connections.push_back(Connection{prev, out_port, next, in_port, arrow});
      skip_space();
      out_port = 0;
      if (peek() == '[') {
        out_port = port_number();
        skip_space();
      }
      prev = next;
    }
    if (out_port != 0 && !at("->")) fail(pos_, "output port without a connection");
  }

  const std::string& s_;
  bool allow_ports_;
  size_t i_ = 0;
  SourcePos pos_;
  ClickConfig out_;
  std::map<std::string, int> declared_;
};

}  // namespace

ClickConfig parse_click(const std::string& text, bool allow_ports) {
  return Parser(text, allow_ports).run();
}

}  // namespace metron
