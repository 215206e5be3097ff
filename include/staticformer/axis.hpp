// staticformer/axis.hpp — axes: a size *and* an identity.
//
// An axis is a type `sf::axis<Tag, N>`. Two axes are the same only when both the
// tag and the size agree, so the sequence axis T=64 and the model axis D=64 are
// different types and cannot be mixed up, even though their sizes match.
#pragma once
#include <cstddef>
#include <type_traits>

namespace sf {

template <class Tag, std::size_t N>
struct axis {
  using tag = Tag;
  static constexpr std::size_t size = N;
  static_assert(N > 0, "sf::axis: an axis must have at least one element");
};

// The model's axis identities. Each tag carries a short name for printing.
namespace tag {
struct batch    { static constexpr const char* name = "B"; };
struct seq      { static constexpr const char* name = "T"; };
struct model    { static constexpr const char* name = "D"; };
struct heads    { static constexpr const char* name = "H"; };
struct head_dim { static constexpr const char* name = "dk"; };
struct ffn      { static constexpr const char* name = "F"; };
struct vocab    { static constexpr const char* name = "V"; };
struct one      { static constexpr const char* name = "1"; };
}  // namespace tag

template <std::size_t N> using Batch   = axis<tag::batch, N>;
template <std::size_t N> using Seq     = axis<tag::seq, N>;
template <std::size_t N> using Model   = axis<tag::model, N>;
template <std::size_t N> using Heads   = axis<tag::heads, N>;
template <std::size_t N> using HeadDim = axis<tag::head_dim, N>;
template <std::size_t N> using Ffn     = axis<tag::ffn, N>;
template <std::size_t N> using Vocab   = axis<tag::vocab, N>;

template <class A> struct is_axis : std::false_type {};
template <class Tag, std::size_t N> struct is_axis<axis<Tag, N>> : std::true_type {};
template <class A> inline constexpr bool is_axis_v = is_axis<A>::value;

// Name of an axis tag for printing; a user tag without `name` prints as "?".
template <class Tag>
constexpr const char* tag_name() {
  if constexpr (requires { Tag::name; }) return Tag::name;
  else return "?";
}

namespace detail {
template <std::size_t I, class... As> struct nth_axis;
template <class A, class... As> struct nth_axis<0, A, As...> { using type = A; };
template <std::size_t I, class A, class... As> struct nth_axis<I, A, As...> : nth_axis<I - 1, As...> {};
}  // namespace detail

template <std::size_t I, class... As> using nth_axis_t = typename detail::nth_axis<I, As...>::type;

// A flat list of axes, used to name shapes in diagnostics and to compute on shapes.
template <class... Axes> struct shape {
  template <std::size_t I> using axis_t = nth_axis_t<I, Axes...>;
  static constexpr std::size_t rank = sizeof...(Axes);
  static constexpr std::size_t size = (std::size_t{1} * ... * Axes::size);
};


}  // namespace sf
