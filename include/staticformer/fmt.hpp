// staticformer/fmt.hpp — printing with {fmt}. Optional: not included by staticformer.hpp.
//
//   fmt::print("{}\n", sf::Seq<64>{});                  // T=64
//   fmt::print("{}\n", decltype(x)::shape_type{});     // (B=4, T=64, D=64)
//   fmt::print("{}\n", x);                              // (T=2, D=3) [[1, 2, 3],
//                                                       //             [4, 5, 6]]
//   fmt::print("{:.3f}\n", x);                          // the spec applies to every element
//   fmt::print("{}\n", sf::configs::nano);              // config{V=65, T=64, ..., norm_eps=1e-05}
//   fmt::print("{}\n", status);                         // ok  |  error: <message>
//
// Tensors print like numpy's repr: nested brackets, elements right-aligned to a common
// width, and for more than `sf::print_threshold` elements only the first and last
// `sf::print_edgeitems` entries of each longer axis, with "..." between.
//
// Axes, shapes, configs, statuses and parameter names accept the string format spec
// ("{:>12}"); tensors accept their element type's spec.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "staticformer/axis.hpp"
#include "staticformer/config.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/status.hpp"
#include "staticformer/tensor.hpp"

namespace sf {

inline constexpr std::size_t print_threshold = 1000;  // more elements than this are summarised
inline constexpr std::size_t print_edgeitems = 3;     // entries kept at each end of a long axis

namespace fmt_detail {

template <class Tag, std::size_t N>
std::string to_string(axis<Tag, N>) {
  return fmt::format("{}={}", tag_name<Tag>(), N);
}

template <class... Axes>
std::string to_string(shape<Axes...>) {
  std::string s = "(";
  bool first = true;
  ((s += (first ? "" : ", ") + to_string(Axes{}), first = false), ...);
  return s + ")";
}

inline std::string to_string(const config& c) {
  return fmt::format(
      "config{{V={}, T={}, D={}, H={}, L={}, F={}, B={}, norm={}, position={}, activation={}, tied={}, "
      "bias={}, norm_eps={}}}",
      c.V, c.T, c.D, c.H, c.L, c.F, c.B, sf::to_string(c.norm), sf::to_string(c.position),
      sf::to_string(c.activation), c.tied, c.bias, c.norm_eps);
}

// The indices shown along an axis of length n; `n` (one past the end) stands for "...".
inline std::vector<std::size_t> shown_indices(std::size_t n, bool summarise) {
  std::vector<std::size_t> idx;
  if (summarise && n > 2 * print_edgeitems) {
    for (std::size_t i = 0; i < print_edgeitems; ++i) idx.push_back(i);
    idx.push_back(n);
    for (std::size_t i = n - print_edgeitems; i < n; ++i) idx.push_back(i);
  } else {
    for (std::size_t i = 0; i < n; ++i) idx.push_back(i);
  }
  return idx;
}

// Lays out already formatted elements (cells, row-major over all elements, only the shown
// ones filled) as nested brackets. `indent` is the column where the outer '[' sits.
class tensor_layout {
 public:
  tensor_layout(const std::size_t* extents, std::size_t rank, bool summarise)
      : extents_(extents), rank_(rank) {
    for (std::size_t a = 0; a < rank; ++a) shown_.push_back(shown_indices(extents[a], summarise));
  }

  // Calls f(flat_index) for every shown element, in order.
  template <class F>
  void for_each_shown(F&& f) const {
    walk(0, 0, f);
  }

  void render(std::string& out, const std::vector<std::string>& cells, std::size_t width,
              std::size_t indent) const {
    render_axis(out, cells, width, indent, 0, 0);
  }

 private:
  template <class F>
  void walk(std::size_t axis, std::size_t base, F& f) const {
    for (std::size_t i : shown_[axis]) {
      if (i == extents_[axis]) continue;  // the "..." entry
      const std::size_t flat = base * extents_[axis] + i;
      if (axis + 1 == rank_) f(flat);
      else walk(axis + 1, flat, f);
    }
  }

  void render_axis(std::string& out, const std::vector<std::string>& cells, std::size_t width,
                   std::size_t indent, std::size_t axis, std::size_t base) const {
    out += '[';
    const bool last_axis = axis + 1 == rank_;
    // numpy's separators: ", " inside a row; between sub-blocks a newline per remaining
    // axis (a blank line between matrices) and an indent under the opening bracket.
    std::string sep = ",";
    if (last_axis) {
      sep += ' ';
    } else {
      sep.append(rank_ - axis - 1, '\n');
      sep.append(indent + axis + 1, ' ');
    }
    bool first = true;
    for (std::size_t i : shown_[axis]) {
      if (!first) out += sep;
      first = false;
      if (i == extents_[axis]) {
        out += "...";
        continue;
      }
      const std::size_t flat = base * extents_[axis] + i;
      if (last_axis) {
        const std::string& c = cells[flat];
        if (c.size() < width) out.append(width - c.size(), ' ');
        out += c;
      } else {
        render_axis(out, cells, width, indent, axis + 1, flat);
      }
    }
    out += ']';
  }

  const std::size_t* extents_;
  std::size_t rank_;
  std::vector<std::vector<std::size_t>> shown_;
};

// Base for the formatters that render a string: accepts the string spec (fill, align, width).
struct string_formatter : fmt::formatter<std::string_view> {
  template <class FormatContext>
  auto format_string(const std::string& s, FormatContext& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(s), ctx);
  }
};

}  // namespace fmt_detail
}  // namespace sf

template <class Tag, std::size_t N>
struct fmt::formatter<sf::axis<Tag, N>> : sf::fmt_detail::string_formatter {
  template <class FormatContext>
  auto format(const sf::axis<Tag, N>& a, FormatContext& ctx) const {
    return format_string(sf::fmt_detail::to_string(a), ctx);
  }
};

template <class... Axes>
struct fmt::formatter<sf::shape<Axes...>> : sf::fmt_detail::string_formatter {
  template <class FormatContext>
  auto format(const sf::shape<Axes...>& s, FormatContext& ctx) const {
    return format_string(sf::fmt_detail::to_string(s), ctx);
  }
};

template <>
struct fmt::formatter<sf::config> : sf::fmt_detail::string_formatter {
  template <class FormatContext>
  auto format(const sf::config& c, FormatContext& ctx) const {
    return format_string(sf::fmt_detail::to_string(c), ctx);
  }
};

template <>
struct fmt::formatter<sf::status> : sf::fmt_detail::string_formatter {
  template <class FormatContext>
  auto format(const sf::status& s, FormatContext& ctx) const {
    return format_string(s ? std::string("ok") : std::string("error: ") + s.message(), ctx);
  }
};

template <>
struct fmt::formatter<sf::param_name> : sf::fmt_detail::string_formatter {
  template <class FormatContext>
  auto format(const sf::param_name& n, FormatContext& ctx) const {
    return format_string(std::string(n.c_str(), n.size()), ctx);
  }
};

#define SF_FMT_ENUM_FORMATTER(E)                                          \
  template <>                                                             \
  struct fmt::formatter<E> : sf::fmt_detail::string_formatter {          \
    template <class FormatContext>                                        \
    auto format(E e, FormatContext& ctx) const {                          \
      return format_string(std::string(sf::to_string(e)), ctx);           \
    }                                                                     \
  };
SF_FMT_ENUM_FORMATTER(sf::norm_kind)
SF_FMT_ENUM_FORMATTER(sf::position_kind)
SF_FMT_ENUM_FORMATTER(sf::activation_kind)
#undef SF_FMT_ENUM_FORMATTER

// A tensor has begin() and end(), but it is printed by the formatter below, not as a range
// (otherwise the two would be ambiguous wherever <fmt/ranges.h> is included).
template <class T, class... Axes>
struct fmt::is_range<sf::tensor<T, Axes...>, char> : std::false_type {};

// A tensor: its shape, then its values. The format spec is the element type's ("{:.3f}").
template <class T, class... Axes>
struct fmt::formatter<sf::tensor<T, Axes...>> {
  constexpr auto parse(fmt::format_parse_context& ctx) {
    auto begin = ctx.begin();
    fmt::formatter<T> element;  // validates the spec (at compile time for literal format strings)
    auto end = element.parse(ctx);
    spec_ = std::string_view(begin, static_cast<std::size_t>(end - begin));
    return end;
  }

  template <class FormatContext>
  auto format(const sf::tensor<T, Axes...>& t, FormatContext& ctx) const {
    using X = sf::tensor<T, Axes...>;
    const std::string head = sf::fmt_detail::to_string(typename X::shape_type{}) + " ";
    const sf::fmt_detail::tensor_layout layout(X::extents, X::rank, X::size > sf::print_threshold);
    const std::string element_format = "{:" + std::string(spec_) + "}";
    std::vector<std::string> cells(X::size);
    std::size_t width = 0;
    layout.for_each_shown([&](std::size_t i) {
      cells[i] = fmt::format(fmt::runtime(element_format), t[i]);
      if (cells[i].size() > width) width = cells[i].size();
    });
    std::string out = head;
    layout.render(out, cells, width, head.size());
    return fmt::format_to(ctx.out(), "{}", out);
  }

 private:
  std::string_view spec_;
};
