// The shared Click parser vectors (tests/click-vectors, also run by the synthesizer's Java parser): every
// success case must produce exactly the expected elements and connections, every error case an error at the
// expected line:col.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/click_ast.h"

namespace metron {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string render(const ClickConfig& c) {
  std::ostringstream out;
  for (const auto& e : c.elements) {
    out << "element " << e.name << " " << e.cls;
    if (!e.args.empty()) {
      out << " ";
      for (size_t i = 0; i < e.args.size(); ++i) out << (i ? ", " : "") << e.args[i];
    }
    out << "\n";
  }
  std::vector<Connection> conns = c.connections;
  std::sort(conns.begin(), conns.end(), [](const Connection& a, const Connection& b) {
    return std::tie(a.from, a.from_port, a.to, a.to_port) < std::tie(b.from, b.from_port, b.to, b.to_port);
  });
  for (const auto& k : conns)
    out << "connect " << c.elements[k.from].name << " [" << k.from_port << "] -> [" << k.to_port << "] "
        << c.elements[k.to].name << "\n";
  return out.str();
}

TEST(ClickVectors, SharedVectorsParseAsExpected) {
  const fs::path dir = fs::path(METRON_REPO_ROOT) / "tests" / "click-vectors";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".click") continue;
    const fs::path expect_path = fs::path(entry.path()).replace_extension(".expect");
    ASSERT_TRUE(fs::exists(expect_path)) << expect_path;
    std::string expect = slurp(expect_path);
    while (!expect.empty() && expect.back() == '\n') expect.pop_back();
    const std::string name = entry.path().filename().string();
    ++cases;
    std::string got;
    try {
      got = render(parse_click(slurp(entry.path()), /*allow_ports=*/false));
      while (!got.empty() && got.back() == '\n') got.pop_back();
      EXPECT_EQ(got, expect) << name;
    } catch (const ClickError& e) {
      // Other parsers compare "error LINE:COL" (the message wording is the Java parser's).
      const std::string where = "error " + std::to_string(e.pos().line) + ":" + std::to_string(e.pos().col) + ":";
      EXPECT_EQ(expect.rfind("error ", 0), 0u) << name << ": unexpected error " << e.what();
      EXPECT_EQ(expect.substr(0, expect.find(':', expect.find(':') + 1) + 1), where) << name << ": " << e.what();
    }
  }
  EXPECT_GE(cases, 20);
}

}  // namespace
}  // namespace metron
