#include <gtest/gtest.h>

#include "core/click_ast.h"

namespace metron {
namespace {

ClickError parse_error(const std::string& text, bool ports = true) {
  try {
    parse_click(text, ports);
  } catch (const ClickError& e) {
    return e;
  }
  ADD_FAILURE() << "no error for: " << text;
  return ClickError({0, 0}, "");
}

TEST(ClickParser, DeclarationsChainsAndPorts) {
  ClickConfig c = parse_click(
      "// comment\n"
      "c :: Classifier(12/0800, -);\n"
      "FromDevice(in0) -> c;\n"
      "c [1] -> Discard;\n"
      "c[0] -> /* inline */ Strip(14) -> [0] q :: Counter -> ToDevice(out0);\n");
  ASSERT_EQ(c.elements.size(), 6u);
  EXPECT_EQ(c.elements[0].name, "c");
  EXPECT_EQ(c.elements[0].cls, "Classifier");
  EXPECT_EQ(c.elements[0].args, (std::vector<std::string>{"12/0800", "-"}));
  EXPECT_EQ(c.elements[1].cls, "FromDevice");
  EXPECT_TRUE(c.elements[1].anonymous);
  EXPECT_EQ(c.elements[1].name, "FromDevice@2");
  EXPECT_EQ(c.elements[2].cls, "Discard");
  EXPECT_TRUE(c.elements[2].args.empty());
  EXPECT_EQ(c.elements[4].name, "q");
  ASSERT_EQ(c.connections.size(), 5u);
  EXPECT_EQ(c.connections[1].from, 0);
  EXPECT_EQ(c.connections[1].from_port, 1);
  EXPECT_EQ(c.connections[1].to, 2);
  EXPECT_EQ(c.connections[1].pos.line, 4);
  EXPECT_EQ(c.connections[1].pos.col, 7);
  EXPECT_EQ(c.elements[4].pos.line, 5);
}

TEST(ClickParser, ArgumentsKeepNestingAndQuotes) {
  ClickConfig c = parse_click("x :: IPFilter(allow (src host 1.2.3.4 && dst port 80), deny \"a,b\", 1 udp);");
  EXPECT_EQ(c.elements[0].args,
            (std::vector<std::string>{"allow (src host 1.2.3.4 && dst port 80)", "deny \"a,b\"", "1 udp"}));
}

TEST(ClickParser, MultipleNamesShareOneDeclaration) {
  ClickConfig c = parse_click("a, b :: Counter; a -> b;");
  ASSERT_EQ(c.elements.size(), 2u);
  EXPECT_EQ(c.elements[1].name, "b");
  EXPECT_EQ(c.connections.size(), 1u);
}

TEST(ClickParser, GroupPortsAreSingletons) {
  ClickConfig c = parse_click("input -> Strip(14) -> [1]output; input[0] -> Counter -> [0]output;");
  EXPECT_EQ(c.find("input"), 0);
  EXPECT_EQ(c.elements.size(), 4u);
  EXPECT_EQ(c.connections[1].to_port, 1);
  EXPECT_EQ(c.connections[1].to, c.find("output"));
}

TEST(ClickParser, ErrorsCarryLineAndColumn) {
  ClickError e = parse_error("a :: Counter;\nb :: Counter(\n");
  EXPECT_EQ(e.pos().line, 2);
  EXPECT_EQ(e.pos().col, 13);
  EXPECT_EQ(std::string(e.what()), "2:13: missing ')' for '(' opened here");

  e = parse_error("a :: Counter;\na :: Discard;");
  EXPECT_EQ(e.pos().line, 2);
  EXPECT_EQ(e.message(), "element 'a' redeclared (first declared at 1:1)");

  e = parse_error("a :: Counter -> ;");
  EXPECT_EQ(e.pos().col, 17);

  e = parse_error("a :: Counter\n  b :: Counter;");
  EXPECT_EQ(e.pos().line, 2);
  EXPECT_EQ(e.pos().col, 3);

  e = parse_error("x -> [z] y;");
  EXPECT_EQ(e.pos().col, 7);

  e = parse_error("/* never closed");
  EXPECT_EQ(e.pos().col, 1);

  e = parse_error("input -> Counter -> output;", /*ports=*/false);
  EXPECT_NE(e.message().find("only allowed in a group"), std::string::npos);

  e = parse_error("elementclass Foo { $a | input -> output }\nFoo -> Discard;");
  EXPECT_EQ(e.message(), "elementclass Foo takes 1 argument(s), got 0");
  EXPECT_EQ(e.pos().line, 2);
}

TEST(ClickParser, CompoundsExpandInPlaceWithTheirArguments) {
  ClickConfig c = parse_click(
      "define($N 14);\n"
      "elementclass Hdr { $len | input -> Strip($len) -> c :: CheckIPHeader -> output; c[1] -> [1]output }\n"
      "input -> h :: Hdr($N) -> [0]output; h[1] -> Discard;");
  ASSERT_EQ(c.elements.size(), 5u);
  EXPECT_EQ(c.elements[1].name, "h/Strip@1");
  EXPECT_EQ(c.elements[1].args, std::vector<std::string>{"14"});
  EXPECT_EQ(c.elements[2].name, "h/c");
  // input -> h/Strip, Strip -> c, c[0] -> output, c[1] -> Discard
  ASSERT_EQ(c.connections.size(), 4u);
  EXPECT_EQ(c.connections[0].from, c.find("input"));
  EXPECT_EQ(c.connections[0].to, c.find("h/Strip@1"));
}

TEST(ClickParser, EmptyAndCommentOnlyConfigsAreEmpty) {
  EXPECT_TRUE(parse_click("").elements.empty());
  EXPECT_TRUE(parse_click(" // nothing\n /* at */ ;; ").elements.empty());
}

}  // namespace
}  // namespace metron
