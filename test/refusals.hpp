// test/refusals.hpp — the readers' refusal tests: a good text edited in one place, and the check
// that a reader refused its input with a message that says what does not fit.
#pragma once
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

namespace sf_test {

// `text` with its first `from` replaced by `to` (a test failure, and the text unchanged, if `from`
// is not in it).
inline std::string edited(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "not in the text: " << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// `r` (an sf::result or sf::status) is a refusal whose message contains `message`.
template <class R>
void expect_refused(const R& r, const std::string& message) {
  ASSERT_FALSE(r.is_ok()) << "accepted; expected a refusal with: " << message;
  EXPECT_NE(std::string(r.message()).find(message), std::string::npos) << r.message();
}

}  // namespace sf_test
