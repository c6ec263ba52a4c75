// JSON text (core/json_text.h): the one rule for strings and numbers behind the trainer's log, a
// recipe's args.json and the timeline.

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

#include <kusari/core/json_text.h>

using namespace kusari;

TEST_CASE("a string keeps well-formed UTF-8 and escapes quotes, backslashes and control characters") {
  CHECK(json_string("") == "\"\"");
  CHECK(json_string("main/loss") == "\"main/loss\"");
  CHECK(json_string("say \"hi\" \\ bye") == "\"say \\\"hi\\\" \\\\ bye\"");
  CHECK(json_string("a\nb\tc\x01\r\b\f\x1f") == "\"a\\nb\\tc\\u0001\\r\\b\\f\\u001f\"");
  CHECK(json_string(std::string("nul\0in", 6)) == "\"nul\\u0000in\"");
  CHECK(json_string("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80\"");
}

TEST_CASE("a byte outside well-formed UTF-8 becomes the surrogate Python turns back into it") {
  CHECK(json_string("\xff") == "\"\\udcff\"");
  CHECK(json_string("Latin-1 caf\xe9.jpg") == "\"Latin-1 caf\\udce9.jpg\"");
  CHECK(json_string("\xc0\x80") == "\"\\udcc0\\udc80\"");               // an overlong form of U+0000
  CHECK(json_string("\xed\xa0\x80") == "\"\\udced\\udca0\\udc80\"");    // a surrogate in UTF-8
  CHECK(json_string("\xf4\x90\x80\x80") == "\"\\udcf4\\udc90\\udc80\\udc80\"");  // past U+10FFFF
  CHECK(json_string("\xe6\x97") == "\"\\udce6\\udc97\"");               // cut short
  CHECK(json_string("\x80x") == "\"\\udc80x\"");                          // a stray continuation byte
}

TEST_CASE("numbers are the shortest text that reads back, non-finite ones by name") {
  CHECK(json_number(0.1) == "0.1");
  CHECK(json_number(2) == "2");
  CHECK(json_number(-1.5e-300) == "-1.5e-300");
  CHECK(std::stod(json_number(1.0 / 3)) == 1.0 / 3);
  CHECK(json_number(std::numeric_limits<double>::quiet_NaN()) == "NaN");
  CHECK(json_number(std::numeric_limits<double>::infinity()) == "Infinity");
  CHECK(json_number(-std::numeric_limits<double>::infinity()) == "-Infinity");
}
