#include "utils/args.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstdlib>
#include <sstream>

namespace metron {

namespace {
[[noreturn]] void bad(const std::string& what, const std::string& expected, const std::string& got) {
  throw ConfigError(what + ": expected " + expected + ", got '" + got + "'");
}
}  // namespace

KeywordArg split_keyword(const std::string& arg) {
  size_t i = 0;
  while (i < arg.size() && (std::isupper(static_cast<unsigned char>(arg[i])) || arg[i] == '_' ||
                            (i > 0 && std::isdigit(static_cast<unsigned char>(arg[i])))))
    ++i;
  if (i < 2 || (i < arg.size() && !std::isspace(static_cast<unsigned char>(arg[i])))) return {"", arg};
  size_t v = i;
  while (v < arg.size() && std::isspace(static_cast<unsigned char>(arg[v]))) ++v;
  return {arg.substr(0, i), arg.substr(v)};
}

Args::Args(const std::vector<std::string>& raw, Options o) : files_(o.files) {
  for (const auto& a : raw) {
    KeywordArg k = o.keywords ? split_keyword(a) : KeywordArg{"", a};
    if (k.keyword.empty()) {
      if (!keywords_.empty()) throw ConfigError("positional argument '" + a + "' after keyword arguments");
      positional_.push_back(a);
    } else {
      keywords_.push_back(std::move(k));
    }
  }
}

std::optional<std::string> Args::take(const std::string& keyword) {
  for (auto it = keywords_.begin(); it != keywords_.end(); ++it) {
    if (it->keyword == keyword) {
      std::string v = it->value;
      keywords_.erase(it);
      return v;
    }
  }
  return std::nullopt;
}

std::vector<std::string> Args::take_all(const std::string& keyword) {
  std::vector<std::string> v;
  while (auto x = take(keyword)) v.push_back(*x);
  return v;
}

void Args::done() const {
  if (!keywords_.empty()) throw ConfigError("unknown keyword argument '" + keywords_.front().keyword + "'");
}

uint64_t parse_uint(const std::string& s, const std::string& what, uint64_t max) {
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0]))) bad(what, "an unsigned integer", s);
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (errno != 0 || *end != '\0') bad(what, "an unsigned integer", s);
  if (v > max) bad(what, "an integer <= " + std::to_string(max), s);
  return v;
}

double parse_double(const std::string& s, const std::string& what) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || v < 0) bad(what, "a non-negative number", s);
  return v;
}

double parse_seconds(const std::string& s, const std::string& what) {
  static const struct {
    const char* unit;
    double scale;
  } units[] = {{"", 1},       {"s", 1},         {"sec", 1},    {"ms", 1e-3}, {"msec", 1e-3}, {"us", 1e-6},
               {"usec", 1e-6}, {"m", 60},        {"min", 60},   {"h", 3600},  {"hr", 3600},   {"d", 86400},
               {"day", 86400}};
  size_t end = s.size();
  while (end > 0 && std::isalpha(static_cast<unsigned char>(s[end - 1]))) --end;
  const std::string unit = s.substr(end);
  for (const auto& u : units)
    if (unit == u.unit) {
      char* stop = nullptr;
      const std::string num = s.substr(0, end);
      const double v = std::strtod(num.c_str(), &stop);
      if (num.empty() || *stop != '\0' || v < 0) break;
      return v * u.scale;
    }
  bad(what, "a time in seconds (a non-negative number, optionally with a unit s, ms, us, min, h or d)", s);
}

bool parse_bool(const std::string& s, const std::string& what) {
  if (s == "true" || s == "1" || s == "yes") return true;
  if (s == "false" || s == "0" || s == "no") return false;
  bad(what, "true or false", s);
}

uint32_t parse_ipv4(const std::string& s, const std::string& what) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) bad(what, "an IPv4 address", s);
  return a.s_addr;
}

void parse_ipv4_prefix(const std::string& s, const std::string& what, uint32_t* addr, uint32_t* mask) {
  std::string a = s, m;
  size_t slash = s.find('/');
  size_t space = s.find(' ');
  if (slash != std::string::npos) {
    a = s.substr(0, slash);
    uint64_t len = parse_uint(s.substr(slash + 1), what + " prefix length", 32);
    *mask = len == 0 ? 0 : ~uint32_t{0} << (32 - len);
  } else if (space != std::string::npos) {
    a = s.substr(0, space);
    m = s.substr(s.find_first_not_of(' ', space));
    *mask = ntohl(parse_ipv4(m, what + " mask"));
  } else {
    *mask = ~uint32_t{0};
  }
  *addr = ntohl(parse_ipv4(a, what)) & *mask;
}

void parse_ipv6(const std::string& s, const std::string& what, uint8_t out[16]) {
  if (inet_pton(AF_INET6, s.c_str(), out) != 1) bad(what, "an IPv6 address", s);
}

void parse_mac(const std::string& s, const std::string& what, uint8_t out[6]) {
  unsigned v[6];
  char tail;
  if (std::sscanf(s.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6)
    bad(what, "a MAC address like 02:4d:00:01:00:02", s);
  for (int i = 0; i < 6; ++i) out[i] = static_cast<uint8_t>(v[i]);
}

void parse_port_range(const std::string& s, const std::string& what, uint16_t* lo, uint16_t* hi) {
  size_t dash = s.find('-');
  if (dash == std::string::npos) {
    *lo = *hi = static_cast<uint16_t>(parse_uint(s, what, 65535));
    return;
  }
  *lo = static_cast<uint16_t>(parse_uint(s.substr(0, dash), what, 65535));
  *hi = static_cast<uint16_t>(parse_uint(s.substr(dash + 1), what, 65535));
  if (*lo > *hi) bad(what, "a port range lo-hi with lo <= hi", s);
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> w;
  for (std::string t; in >> t;) w.push_back(t);
  return w;
}

std::string unquote(const std::string& s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    return s.substr(1, s.size() - 2);
  return s;
}

}  // namespace metron
