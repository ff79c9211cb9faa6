// Parsing Click element arguments ("TIMEOUT 30", "10.0.0.1", "02:4d:00:00:00:01", "1024-65535").
// Every parser throws ConfigError naming what it expected and the text it got; the graph builder prefixes the
// element and its line:col.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace metron {

class ConfigError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A well-formed configuration this server cannot hold (memory for a declared flow-table capacity): refused with
// RESOURCE_EXHAUSTED instead of INVALID_ARGUMENT.
class ResourceError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// A well-formed configuration whose outside requirement failed when it was initialised (a black-box NF's program
// not found, exited, never attached): refused with FAILED_PRECONDITION and this message as it is, no prefix.
class PreconditionError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// Splits "KEYWORD rest" when the first word is an all-caps keyword (Click's keyword arguments).
struct KeywordArg {
  std::string keyword;  // empty for a positional argument
  std::string value;
};
KeywordArg split_keyword(const std::string& arg);

// Positional arguments in order plus keyword arguments; unknown keywords are rejected by done().
class Args {
 public:
  struct Options {
    // false: every argument is positional, even one that starts with an all-caps word (IPRewriterPatterns'
    // `NAT 10.0.0.1 1024-65535 - -`).
    bool keywords = true;
    // Whether elements may read files named in their arguments (IPFilter `file PATH`): standalone configurations
    // on the agent's own host, not group configurations sent over the control API.
    bool files = false;
  };
  explicit Args(const std::vector<std::string>& raw) : Args(raw, Options{}) {}
  Args(const std::vector<std::string>& raw, Options o);
  bool files_allowed() const { return files_; }
  size_t positional_count() const { return positional_.size(); }
  const std::string& positional(size_t i) const { return positional_.at(i); }
  const std::vector<std::string>& positionals() const { return positional_; }
  // Removes and returns a keyword's value, if present.
  std::optional<std::string> take(const std::string& keyword);
  // Removes and returns every value of a repeatable keyword, in order.
  std::vector<std::string> take_all(const std::string& keyword);
  // Throws if keywords remain that no one took.
  void done() const;

 private:
  std::vector<std::string> positional_;
  std::vector<KeywordArg> keywords_;
  bool files_ = false;
};

uint64_t parse_uint(const std::string& s, const std::string& what, uint64_t max = UINT64_MAX);
double parse_double(const std::string& s, const std::string& what);
// Click's SecondsArg: a non-negative number with an optional unit (s/sec, ms/msec, us/usec, m/min, h/hr, d/day).
double parse_seconds(const std::string& s, const std::string& what);
bool parse_bool(const std::string& s, const std::string& what);
// IPv4 in network byte order.
uint32_t parse_ipv4(const std::string& s, const std::string& what);
// "a.b.c.d/len" or "a.b.c.d mask" or "a.b.c.d" (= /32); address and mask in host order.
void parse_ipv4_prefix(const std::string& s, const std::string& what, uint32_t* addr, uint32_t* mask);
void parse_ipv6(const std::string& s, const std::string& what, uint8_t out[16]);
void parse_mac(const std::string& s, const std::string& what, uint8_t out[6]);
// "lo-hi" or a single value.
void parse_port_range(const std::string& s, const std::string& what, uint16_t* lo, uint16_t* hi);
std::vector<std::string> split_words(const std::string& s);
std::string unquote(const std::string& s);

}  // namespace metron
