// Recursive-descent parser for Click configurations (language: click_ast.h and tests/click-vectors/README.md).
//
// Compound elements are expanded while parsing: an `elementclass` body is kept as a text range and parsed again
// for every instance, in a scope that prefixes names ("x/") and binds the formals. Connections are first made
// between nodes (elements, compound instances and the compound's input/output pseudo-ports) and resolved to
// element-to-element connections at the end, so `input`/`output` of a compound are bypassed.
#include <algorithm>
#include <cctype>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "core/click_ast.h"

namespace metron {

namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '@'; }
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '@' || c == '/';
}
bool var_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

std::string normalize(const std::string& s) {  // trim and collapse whitespace runs
  std::string out;
  bool space = false;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !out.empty();
    } else {
      if (space) out += ' ';
      space = false;
      out += c;
    }
  }
  return out;
}

struct ClassDef {
  std::string name;
  std::vector<std::string> formals;  // without '$'
  size_t body_begin = 0, body_end = 0;
  SourcePos body_pos;
};

enum class NodeKind { kElement, kInstance, kCompoundIn, kCompoundOut };

struct Node {
  NodeKind kind = NodeKind::kElement;
  int element = -1;    // kElement: index into the output's elements
  int port_node = -1;  // kInstance: its kCompoundIn node (kCompoundOut = port_node + 1)
  int instance = -1;   // kCompoundIn/Out: the instance node
};

struct Edge {
  int from, from_port, to, to_port;
  SourcePos pos;
};

struct Scope {
  std::string prefix;                 // "" or "x/" or "x/y/"
  std::map<std::string, int> names;   // local name -> node
  std::map<std::string, SourcePos> where;
  std::map<std::string, std::string> vars;
  std::map<std::string, ClassDef> classes;
  const Scope* parent = nullptr;
  int count = 0;  // elements (and instances) created in this scope, for Class@N names
  int in_node = -1, out_node = -1;  // compound scopes: the instance's ports

  const ClassDef* find_class(const std::string& n) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      auto it = s->classes.find(n);
      if (it != s->classes.end()) return &it->second;
    }
    return nullptr;
  }
  const std::string* find_var(const std::string& n) const {
    for (const Scope* s = this; s != nullptr; s = s->parent) {
      auto it = s->vars.find(n);
      if (it != s->vars.end()) return &it->second;
    }
    return nullptr;
  }
};

class Parser {
 public:
  Parser(const std::string& text, bool allow_ports) : s_(text), allow_ports_(allow_ports) {}

  ClickConfig run() {
    Scope top;
    end_ = s_.size();
    parse_block(top, /*in_braces=*/false);
    resolve();
    return std::move(out_);
  }

 private:
  // ---- characters ----------------------------------------------------------------------------------------------
  bool eof() const { return i_ >= end_; }
  char peek(size_t k = 0) const { return i_ + k < end_ ? s_[i_ + k] : '\0'; }
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
  bool at(const char* tok) const {
    const size_t n = std::char_traits<char>::length(tok);
    return i_ + n <= end_ && s_.compare(i_, n, tok) == 0;
  }

  std::string describe_here() const {
    if (eof()) return "end of input";
    return std::string("'") + peek() + "'";
  }

  void skip_space() {
    for (;;) {
      while (!eof() && std::isspace(static_cast<unsigned char>(peek()))) advance();
      if (peek() == '/' && peek(1) == '/') {
        while (!eof() && peek() != '\n') advance();
      } else if (peek() == '/' && peek(1) == '*') {
        const SourcePos start = pos_;
        advance();
        advance();
        while (!eof() && !(peek() == '*' && peek(1) == '/')) advance();
        if (eof()) fail(start, "unterminated /* comment");
        advance();
        advance();
      } else if (peek() == '#' && pos_.col == 1) {
        while (!eof() && peek() != '\n') advance();
      } else {
        return;
      }
    }
  }

  std::string ident(const std::string& what) {
    if (!ident_start(peek())) fail(pos_, "expected " + what + ", found " + describe_here());
    const size_t b = i_;
    while (!eof() && ident_char(peek())) {
      if (peek() == '/' && (peek(1) == '/' || peek(1) == '*')) break;
      advance();
    }
    return s_.substr(b, i_ - b);
  }

  int port_number() {
    const SourcePos open = pos_;
    advance();  // '['
    skip_space();
    if (!std::isdigit(static_cast<unsigned char>(peek()))) fail(pos_, "expected a port number, found " + describe_here());
    long v = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (peek() - '0');
      if (v > 65535) fail(open, "port number too large");
      advance();
    }
    skip_space();
    if (peek() != ']') fail(pos_, "expected ']', found " + describe_here());
    advance();
    return static_cast<int>(v);
  }

  // A balanced "( ... )" configuration string split at top-level commas. `$VAR`s are substituted from `scope`
  // unless it is null (define arguments). arg_pos gets where each argument starts.
  std::vector<std::string> config_args(const Scope* scope, SourcePos* where, std::vector<SourcePos>* arg_pos = nullptr) {
    const SourcePos open = pos_;
    advance();  // '('
    *where = pos_;
    std::vector<std::string> args;
    std::vector<SourcePos> starts;
    std::string cur;
    SourcePos cur_start = pos_;
    bool started = false;
    int depth = 0;
    auto mark = [&] {
      if (!started) started = true, cur_start = pos_;
    };
    for (;;) {
      if (eof()) fail(open, "missing ')' for '(' opened here");
      const char c = peek();
      if (c == '"' || c == '\'') {
        mark();
        const SourcePos q = pos_;
        cur += c;
        advance();
        while (!eof() && peek() != c) {
          if (peek() == '\\' && c == '"') {
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
        continue;
      }
      if (c == '/' && (peek(1) == '/' || peek(1) == '*')) {
        skip_space();
        cur += ' ';
        continue;
      }
      if (c == '$' && scope != nullptr && var_char(peek(1))) {
        mark();
        const SourcePos vp = pos_;
        advance();
        std::string name;
        while (!eof() && var_char(peek())) name += peek(), advance();
        const std::string* v = scope->find_var(name);
        if (v == nullptr) fail(vp, "undefined variable '$" + name + "'");
        cur += *v;
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
        args.push_back(normalize(cur));
        starts.push_back(started ? cur_start : pos_);
        cur.clear();
        started = false;
        advance();
        continue;
      }
      if (!std::isspace(static_cast<unsigned char>(c))) mark();
      cur += c;
      advance();
    }
    const std::string last = normalize(cur);
    if (!last.empty() || !args.empty()) {
      args.push_back(last);
      starts.push_back(cur_start);
    }
    if (arg_pos != nullptr) *arg_pos = starts;
    return args;
  }

  // ---- nodes and elements ----------------------------------------------------------------------------------
  int new_node(Node n) {
    nodes_.push_back(n);
    return static_cast<int>(nodes_.size()) - 1;
  }

  void declare(Scope& sc, const std::string& name, SourcePos p, int node) {
    auto it = sc.where.find(name);
    if (it != sc.where.end())
      fail(p, "element '" + name + "' redeclared (first declared at " + std::to_string(it->second.line) + ":" +
                  std::to_string(it->second.col) + ")");
    sc.names[name] = node;
    sc.where[name] = p;
  }

  // Creates an element or a compound instance of `cls`; name empty = anonymous.
  int create(Scope& sc, std::string name, const std::string& cls, std::vector<std::string> args, SourcePos p,
             SourcePos cls_pos, SourcePos args_pos) {
    ++sc.count;
    const bool anon = name.empty();
    if (anon) name = cls + "@" + std::to_string(sc.count);
    if (const ClassDef* def = sc.find_class(cls)) {
      if (args.size() != def->formals.size())
        fail(cls_pos, "elementclass " + cls + " takes " + std::to_string(def->formals.size()) +
                          " argument(s), got " + std::to_string(args.size()));
      const int inst = new_node({NodeKind::kInstance, -1, -1, -1});
      const int in = new_node({NodeKind::kCompoundIn, -1, -1, inst});
      new_node({NodeKind::kCompoundOut, -1, -1, inst});
      nodes_[inst].port_node = in;
      if (!anon) declare(sc, name, p, inst);
      if (++depth_ > 32) fail(cls_pos, "elementclass " + cls + " expands recursively");
      Scope inner;
      inner.prefix = sc.prefix + name + "/";
      inner.parent = &sc;
      inner.in_node = in;
      inner.out_node = in + 1;
      for (size_t k = 0; k < args.size(); ++k) inner.vars[def->formals[k]] = args[k];
      // Parse the body again, here, in the instance's scope.
      const size_t save_i = i_, save_end = end_;
      const SourcePos save_pos = pos_;
      i_ = def->body_begin;
      end_ = def->body_end;
      pos_ = def->body_pos;
      parse_block(inner, /*in_braces=*/false);
      i_ = save_i;
      end_ = save_end;
      pos_ = save_pos;
      --depth_;
      return inst;
    }
    ElementDecl d;
    d.name = sc.prefix + name;
    d.cls = cls;
    d.args = std::move(args);
    d.pos = p;
    d.args_pos = args_pos;
    d.anonymous = anon;
    out_.elements.push_back(std::move(d));
    const int node = new_node({NodeKind::kElement, static_cast<int>(out_.elements.size()) - 1, -1, -1});
    if (!anon) declare(sc, name, p, node);
    return node;
  }

  int group_port(Scope& sc, const std::string& which, SourcePos p) {
    auto it = sc.names.find(which);
    if (it != sc.names.end()) return it->second;
    ElementDecl d;
    d.name = which;
    d.cls = which;
    d.pos = p;
    out_.elements.push_back(std::move(d));
    const int node = new_node({NodeKind::kElement, static_cast<int>(out_.elements.size()) - 1, -1, -1});
    sc.names[which] = node;
    return node;
  }

  // element := name '::' Class [config] | Class config | name | Class
  int element(Scope& sc) {
    const SourcePos p = pos_;
    if (peek() == '{') fail(p, "unsupported construct: anonymous compound element '{ ... }'");
    const std::string name = ident("an element name or class");
    skip_space();
    if (at("::")) {
      advance();
      advance();
      skip_space();
      const SourcePos cp = pos_;
      if (!ident_start(peek())) fail(cp, "expected a class name after '" + name + " ::', found " + describe_here());
      const std::string cls = ident("a class name");
      if (cls == "input" || cls == "output") fail(cp, "'" + cls + "' is not an element class");
      if (name == "input" || name == "output") fail(p, "'" + name + "' is reserved for ports");
      skip_space();
      SourcePos ap = pos_;
      std::vector<std::string> args;
      if (peek() == '(') args = config_args(&sc, &ap);
      return create(sc, name, cls, std::move(args), p, cp, ap);
    }
    if (peek() == '(') {
      if (sc.names.count(name)) fail(p, "'" + name + "' is an element, not a class: it takes no configuration");
      SourcePos ap;
      auto args = config_args(&sc, &ap);
      return create(sc, "", name, std::move(args), p, p, ap);
    }
    auto it = sc.names.find(name);
    if (it != sc.names.end()) return it->second;
    if (name == "input" || name == "output") {
      if (sc.in_node >= 0) return name == "input" ? sc.in_node : sc.out_node;
      if (!allow_ports_) fail(p, "'" + name + "' is only allowed in a group configuration or an elementclass");
      return group_port(sc, name, p);
    }
    return create(sc, "", name, {}, p, p, pos_);
  }

  // ---- statements ------------------------------------------------------------------------------------------
  void parse_block(Scope& sc, bool in_braces) {
    skip_space();
    while (!eof() && !(in_braces && peek() == '}')) {
      if (peek() == ';') {
        advance();
      } else {
        const bool braced = statement(sc);  // `elementclass X { }` needs no ';'
        skip_space();
        if (!braced && !eof() && !(in_braces && peek() == '}')) {
          if (peek() != ';') fail(pos_, "expected ';' or '->', found " + describe_here());
          advance();
        }
      }
      skip_space();
    }
  }

  void elementclass(Scope& sc, SourcePos kw) {
    skip_space();
    ClassDef def;
    def.name = ident("a class name after 'elementclass'");
    skip_space();
    if (peek() != '{') fail(pos_, "expected '{' after 'elementclass " + def.name + "', found " + describe_here());
    const SourcePos open = pos_;
    advance();
    skip_space();
    if (peek() == '$') {  // formals: $a, $b |
      for (;;) {
        skip_space();
        if (peek() != '$') fail(pos_, "expected '$NAME' in the formal parameters, found " + describe_here());
        advance();
        std::string f;
        while (!eof() && var_char(peek())) f += peek(), advance();
        def.formals.push_back(f);
        skip_space();
        if (peek() == ',') {
          advance();
          continue;
        }
        if (peek() != '|') fail(pos_, "expected ',' or '|' after the formal parameters, found " + describe_here());
        advance();
        break;
      }
    }
    def.body_begin = i_;
    def.body_pos = pos_;
    // Find the matching '}' (braces may nest inside, e.g. an inner elementclass); skip strings and comments.
    int depth = 0;
    for (;;) {
      skip_space();
      if (eof()) fail(open, "missing '}' for the elementclass opened here");
      const char c = peek();
      if (c == '"' || c == '\'') {
        advance();
        while (!eof() && peek() != c) advance();
        if (!eof()) advance();
        continue;
      }
      if (c == '{') ++depth;
      if (c == '}') {
        if (depth == 0) break;
        --depth;
      }
      advance();
    }
    def.body_end = i_;
    advance();  // '}'
    (void)kw;
    sc.classes[def.name] = def;
  }

  void define(Scope& sc) {
    SourcePos ap;
    std::vector<SourcePos> starts;
    auto args = config_args(nullptr, &ap, &starts);
    for (size_t k = 0; k < args.size(); ++k) {
      const std::string& a = args[k];
      const size_t sp = a.find(' ');
      if (a.size() < 2 || a[0] != '$' || !var_char(a[1]) || sp == std::string::npos)
        fail(starts[k], "define: expected '$NAME value', found '" + a + "'");
      const std::string name = a.substr(1, sp - 1);
      for (char c : name)
        if (!var_char(c)) fail(starts[k], "define: expected '$NAME value', found '" + a + "'");
      sc.vars[name] = a.substr(sp + 1);
    }
  }

  // Returns true when the statement ended with a '}' (and so needs no ';').
  bool statement(Scope& sc) {
    const SourcePos p = pos_;
    if (ident_start(peek())) {
      const size_t save_i = i_;
      const SourcePos save_pos = pos_;
      const std::string word = ident("a statement");
      skip_space();
      if (word == "elementclass") {
        elementclass(sc, p);
        return true;
      }
      if (word == "require" && peek() == '(') {
        SourcePos ap;
        config_args(nullptr, &ap);
        return false;
      }
      if (word == "define" && peek() == '(') {
        define(sc);
        return false;
      }
      if (peek() == ',') {  // a, b, c :: Class(args)
        std::vector<std::pair<std::string, SourcePos>> names{{word, p}};
        while (peek() == ',') {
          advance();
          skip_space();
          const SourcePos np = pos_;
          names.emplace_back(ident("an element name"), np);
          skip_space();
        }
        if (!at("::")) fail(pos_, "expected '::' after the element names, found " + describe_here());
        advance();
        advance();
        skip_space();
        const SourcePos cp = pos_;
        if (!ident_start(peek()))
          fail(cp, "expected a class name after '" + names.back().first + " ::', found " + describe_here());
        const std::string cls = ident("a class name");
        skip_space();
        std::vector<std::string> args;
        SourcePos ap = pos_;
        if (peek() == '(') args = config_args(&sc, &ap);
        for (auto& [n, np] : names) {
          if (n == "input" || n == "output") fail(np, "'" + n + "' is reserved for ports");
          create(sc, n, cls, args, np, cp, ap);
        }
        return false;
      }
      i_ = save_i;
      pos_ = save_pos;
    }
    chain(sc);
    return false;
  }

  void chain(Scope& sc) {
    skip_space();
    if (peek() == '[') fail(pos_, "a connection cannot start with an input port");
    int prev = element(sc);
    skip_space();
    int out_port = 0;
    bool have_out_port = false;
    if (peek() == '[') {
      out_port = port_number();
      have_out_port = true;
      skip_space();
    }
    while (at("->") || at("=>")) {
      if (at("=>")) fail(pos_, "unsupported construct: '=>'");
      const SourcePos arrow = pos_;
      advance();
      advance();
      skip_space();
      int in_port = 0;
      if (peek() == '[') {
        in_port = port_number();
        skip_space();
      }
      const int next = element(sc);
      edges_.push_back(Edge{prev, out_port, next, in_port, arrow});
      skip_space();
      out_port = 0;
      have_out_port = false;
      if (peek() == '[') {
        out_port = port_number();
        have_out_port = true;
        skip_space();
      }
      prev = next;
    }
    if (have_out_port) fail(pos_, "expected '->' after output port, found " + describe_here());
  }

  // ---- compound resolution ---------------------------------------------------------------------------------
  using End = std::pair<int, int>;  // element index, port

  void sources(int node, int port, std::set<End>* out, int depth) {
    if (depth > 64) return;
    const Node& n = nodes_[node];
    if (n.kind == NodeKind::kElement) {
      out->insert({n.element, port});
      return;
    }
    // An instance's output k = whatever feeds its `output` port k; a compound's `input` k = what feeds the
    // instance's input k.
    const int target = n.kind == NodeKind::kInstance ? n.port_node + 1 : n.kind == NodeKind::kCompoundIn ? n.instance : -1;
    if (target < 0) return;
    for (const Edge& e : edges_)
      if (e.to == target && e.to_port == port) sources(e.from, e.from_port, out, depth + 1);
  }

  void targets(int node, int port, std::set<End>* out, int depth) {
    if (depth > 64) return;
    const Node& n = nodes_[node];
    if (n.kind == NodeKind::kElement) {
      out->insert({n.element, port});
      return;
    }
    const int source = n.kind == NodeKind::kInstance ? n.port_node : n.kind == NodeKind::kCompoundOut ? n.instance : -1;
    if (source < 0) return;
    for (const Edge& e : edges_)
      if (e.from == source && e.from_port == port) targets(e.to, e.to_port, out, depth + 1);
  }

  void resolve() {
    std::set<std::tuple<int, int, int, int>> seen;
    for (const Edge& e : edges_) {
      std::set<End> from, to;
      sources(e.from, e.from_port, &from, 0);
      targets(e.to, e.to_port, &to, 0);
      for (const End& f : from)
        for (const End& t : to)
          if (seen.insert({f.first, f.second, t.first, t.second}).second)
            out_.connections.push_back(Connection{f.first, f.second, t.first, t.second, e.pos});
    }
  }

  const std::string& s_;
  bool allow_ports_;
  size_t i_ = 0;
  size_t end_ = 0;
  SourcePos pos_;
  int depth_ = 0;
  ClickConfig out_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
};

}  // namespace

ClickConfig parse_click(const std::string& text, bool allow_ports) { return Parser(text, allow_ports).run(); }

}  // namespace metron
