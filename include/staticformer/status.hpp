// staticformer/status.hpp — errors as values, with a readable message, no heap.
//
//   sf::status s = load(...);
//   if (!s) std::puts(s.message());
//
// A status is ok or carries a message of at most `status::capacity - 1` characters
// (longer messages are cut). It works with -fno-exceptions and without iostream.
#pragma once
#include <cstddef>
#include <concepts>
#include <type_traits>
#include <cstdint>

namespace sf {

class status {
 public:
  static constexpr std::size_t capacity = 320;

  constexpr status() = default;  // ok
  static constexpr status ok() { return status{}; }

  // A failed status from parts: strings (const char*) and integers, concatenated.
  template <class... Parts>
  static constexpr status error(const Parts&... parts) {
    status s;
    s.ok_ = false;
    (s.append(parts), ...);
    return s;
  }

  constexpr explicit operator bool() const { return ok_; }
  constexpr bool is_ok() const { return ok_; }
  constexpr const char* message() const { return ok_ ? "ok" : msg_; }

  // Append more text to a failed status (e.g. context from a caller).
  constexpr status& append(const char* s) {
    while (s && *s && len_ + 1 < capacity) msg_[len_++] = *s++;
    msg_[len_] = '\0';
    return *this;
  }
  constexpr status& append(char c) {
    if (len_ + 1 < capacity) msg_[len_++] = c;
    msg_[len_] = '\0';
    return *this;
  }
  template <std::integral I>
  constexpr status& append(I v) {
    char buf[24];
    int n = 0;
    bool neg = false;
    std::uint64_t u;
    if constexpr (std::is_signed_v<I>) {
      neg = v < 0;
      u = neg ? static_cast<std::uint64_t>(-(static_cast<std::int64_t>(v) + 1)) + 1 : static_cast<std::uint64_t>(v);
    } else {
      u = static_cast<std::uint64_t>(v);
    }
    do {
      buf[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u);
    if (neg) append('-');
    while (n) append(buf[--n]);
    return *this;
  }

 private:
  bool ok_ = true;
  std::size_t len_ = 0;
  char msg_[capacity] = {};
};

}  // namespace sf
