// The parsed form of a Click configuration: element declarations and connections, with source positions so
// every later error (unknown class, bad argument, unconnected port) can point at line:col.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace metron {

struct SourcePos {
  int line = 1;  // 1-based
  int col = 1;   // 1-based, in bytes
};

// An error in a Click configuration. what() is "line:col: message".
class ClickError : public std::runtime_error {
 public:
  ClickError(SourcePos pos, const std::string& msg)
      : std::runtime_error(std::to_string(pos.line) + ":" + std::to_string(pos.col) + ": " + msg),
        pos_(pos),
        msg_(msg) {}
  SourcePos pos() const { return pos_; }
  const std::string& message() const { return msg_; }

 private:
  SourcePos pos_;
  std::string msg_;
};

// A configuration this server cannot hold (ResourceError from an element: memory for a declared capacity).
class ClickResourceError : public ClickError {
 public:
  using ClickError::ClickError;
};

// An element whose outside requirement failed (PreconditionError): message() is the element's own text.
class ClickPreconditionError : public ClickError {
 public:
  using ClickError::ClickError;
};

struct ElementDecl {
  std::string name;               // declared name, or "Class@N" for anonymous elements
  std::string cls;                // element class; "input"/"output" for a group config's pseudo-ports
  std::vector<std::string> args;  // configuration split at top-level commas, trimmed, comments removed
  SourcePos pos;                  // where the element was declared
  SourcePos args_pos;             // where its configuration string starts
  bool anonymous = false;
};

struct Connection {
  int from = 0;  // index into ClickConfig::elements
  int from_port = 0;
  int to = 0;
  int to_port = 0;
  SourcePos pos;  // position of the "->"
};

struct ClickConfig {
  std::vector<ElementDecl> elements;
  std::vector<Connection> connections;
  int find(const std::string& name) const {
    for (size_t i = 0; i < elements.size(); ++i)
      if (elements[i].name == name) return static_cast<int>(i);
    return -1;
  }
};

// Parses Click's language: declarations `a, b :: Class(args)`, connection chains `x [1] -> [0] y -> z`,
// anonymous elements `Class(args)` / `Class`, `//` and `/* */` comments, `require(...)` (ignored),
// FastClick `=>` is not accepted. `input` and `output` are pseudo-elements when allow_ports is set (group
// configs, docs/contracts.md#click). Throws ClickError with line:col.
ClickConfig parse_click(const std::string& text, bool allow_ports = true);

}  // namespace metron
