// The one reading of names' bytes: strict UTF-8 for wheels, HFS+'s lenient decoding for git's
// path rules, and the control bytes every layer refuses or escapes.
#include "core/text_bytes.h"

#include <gtest/gtest.h>

#include <string>

namespace apexnpu {
namespace {

std::uint32_t decoded(std::string_view text, Utf8Rules rules) {
  const auto point = decode_utf8(text, 0, rules);
  EXPECT_TRUE(point) << "no sequence at the start of a " << text.size() << "-byte text";
  if (!point) return 0;
  EXPECT_EQ(point->length, text.size());
  return point->value;
}

TEST(Utf8, StrictValidationFollowsTheStandard) {
  EXPECT_TRUE(is_valid_utf8("plain"));
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("\xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_TRUE(is_valid_utf8("\xf4\x8f\xbf\xbf"));   // U+10FFFF, the last code point
  EXPECT_FALSE(is_valid_utf8("\xc0\xaf"));          // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xe0\x80\xae"));      // overlong '.', three bytes
  EXPECT_FALSE(is_valid_utf8("\xed\xa0\x80"));      // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));  // past U+10FFFF
  EXPECT_FALSE(is_valid_utf8("\xe2\x82"));          // cut short
  EXPECT_FALSE(is_valid_utf8("\x80"));              // a continuation byte first
  EXPECT_FALSE(is_valid_utf8("\xe2\x28\xa1"));      // a lead byte without its continuation
}

TEST(Utf8, DecodesCodePointsAndTheirLengths) {
  EXPECT_EQ(decoded("A", Utf8Rules::strict), 0x41u);
  EXPECT_EQ(decoded("\xc3\xa9", Utf8Rules::strict), 0xe9u);
  EXPECT_EQ(decoded("\xe2\x80\x8c", Utf8Rules::strict), 0x200cu);  // a zero-width non-joiner
  EXPECT_EQ(decoded("\xf0\x9f\x98\x80", Utf8Rules::strict), 0x1f600u);
  const auto second = decode_utf8("a\xc3\xa9", 1, Utf8Rules::strict);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->value, 0xe9u);
}

TEST(Utf8, LenientDecodingReadsOverlongFormsAsHfsDoes) {
  // HFS+ reads these as their code points, so the path rules must see them as such.
  EXPECT_EQ(decoded("\xc0\xae", Utf8Rules::lenient), static_cast<std::uint32_t>('.'));
  EXPECT_EQ(decoded("\xe0\x80\xae", Utf8Rules::lenient), static_cast<std::uint32_t>('.'));
  EXPECT_EQ(decoded("\xed\xa0\x80", Utf8Rules::lenient), 0xd800u);
  EXPECT_FALSE(decode_utf8("\xc0\xae", 0, Utf8Rules::strict));
  // What is no sequence at all stays none.
  EXPECT_FALSE(decode_utf8("\x80", 0, Utf8Rules::lenient));
  EXPECT_FALSE(decode_utf8("\xe2\x82", 0, Utf8Rules::lenient));
  EXPECT_FALSE(decode_utf8("\xc3(", 0, Utf8Rules::lenient));
}

TEST(TextBytes, ControlBytesAreC0AndDel) {
  for (int byte = 0; byte < 256; ++byte) {
    const bool expected = byte < 0x20 || byte == 0x7f;
    EXPECT_EQ(is_control_byte(static_cast<char>(byte)), expected) << byte;
  }
  EXPECT_TRUE(is_utf8_continuation('\x80'));
  EXPECT_TRUE(is_utf8_continuation('\xbf'));
  EXPECT_FALSE(is_utf8_continuation('\xc3'));
  EXPECT_FALSE(is_utf8_continuation('a'));
  EXPECT_TRUE(is_ascii("a/b.py\x7f"));
  EXPECT_FALSE(is_ascii("caf\xc3\xa9"));
}

}  // namespace
}  // namespace apexnpu
