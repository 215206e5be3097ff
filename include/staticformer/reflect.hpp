// staticformer/reflect.hpp — parameters are declared once and visited, never listed by hand.
//
// A parameter struct is a Hana struct whose members are tensors, other parameter
// structs, std::array of them (one per block), or sf::none (a parameter this
// configuration does not have, e.g. a bias when bias = false):
//
//   struct norm_params {
//     BOOST_HANA_DEFINE_STRUCT(norm_params, (vec_d, weight), (maybe_vec_d, bias));
//   };
//
// sf::visit(f, a, b, ...) walks structurally identical structs (parameters,
// gradients, optimizer moments) in lock-step and calls
// f(name, leaf_a, leaf_b, ...) for every tensor, by reference, with its dotted
// checkpoint name ("blocks.0.attn.wq"). Counting, zeroing, printing, optimizers
// and checkpoint names are all built on it.
#pragma once
#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include <boost/hana/accessors.hpp>
#include <boost/hana/at.hpp>
#include <boost/hana/define_struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>

#include "staticformer/tensor.hpp"

namespace sf {

// Stands in for a parameter this configuration does not have; takes no storage worth counting.
struct none {
  friend constexpr bool operator==(none, none) { return true; }
};

// `maybe<Cond, X>` is X when Cond holds, else sf::none.
template <bool Cond, class X> using maybe = std::conditional_t<Cond, X, none>;

// A dotted name built during a visit, fixed capacity, no heap.
class param_name {
 public:
  static constexpr std::size_t capacity = 96;
  constexpr const char* c_str() const { return buf_; }
  constexpr std::size_t size() const { return len_; }
  constexpr param_name child(const char* part) const {
    param_name n = *this;
    if (n.len_ && n.len_ + 1 < capacity) n.buf_[n.len_++] = '.';
    while (*part && n.len_ + 1 < capacity) n.buf_[n.len_++] = *part++;
    n.buf_[n.len_] = '\0';
    return n;
  }
  constexpr param_name child(std::size_t index) const {
    char digits[24] = {};
    int k = 0;
    do {
      digits[k++] = static_cast<char>('0' + index % 10);
      index /= 10;
    } while (index);
    char rev[24] = {};
    for (int i = 0; i < k; ++i) rev[i] = digits[k - 1 - i];
    return child(rev);
  }
  constexpr bool ends_with(const char* suffix) const {
    std::size_t n = 0;
    while (suffix[n]) ++n;
    if (n > len_) return false;
    for (std::size_t i = 0; i < n; ++i)
      if (buf_[len_ - n + i] != suffix[i]) return false;
    return true;
  }
  friend constexpr bool operator==(const param_name& a, const char* b) {
    std::size_t i = 0;
    for (; i < a.len_ && b[i]; ++i)
      if (a.buf_[i] != b[i]) return false;
    return i == a.len_ && b[i] == '\0';
  }

 private:
  std::size_t len_ = 0;
  char buf_[capacity] = {};
};

// A leaf that is not a tensor (e.g. a quantized matrix, quantize.hpp) declares
// `static constexpr bool sf_leaf = true;` and `size` (its number of weights).
template <class X> concept custom_leaf = requires { requires X::sf_leaf; };
template <class X> inline constexpr bool is_leaf_v = is_tensor<X>::value || custom_leaf<X>;

template <class X> struct is_std_array : std::false_type {};
template <class E, std::size_t N> struct is_std_array<std::array<E, N>> : std::true_type {};

namespace detail {
template <class F, class S, class... Ss>
constexpr void visit_at(const param_name& name, F& f, S& s, Ss&... ss) {
  using U = std::remove_cvref_t<S>;
  if constexpr (std::is_same_v<U, none>) {
    // absent in this configuration
  } else if constexpr (is_leaf_v<U>) {
    f(name, s, ss...);
  } else if constexpr (is_std_array<U>::value) {
    for (std::size_t i = 0; i < s.size(); ++i) visit_at(name.child(i), f, s[i], ss[i]...);
  } else {
    static_assert(boost::hana::Struct<U>::value,
                  "sf::visit: a parameter struct must be declared with BOOST_HANA_DEFINE_STRUCT and hold "
                  "tensors, parameter structs, std::array of them, or sf::none");
    // member I of each struct (the structs visited together have the same member names;
    // each is read through its own type's accessor)
    constexpr std::size_t n = decltype(boost::hana::length(boost::hana::accessors<U>()))::value;
    auto member = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      constexpr auto acc = boost::hana::at_c<I>(boost::hana::accessors<U>());
      visit_at(name.child(boost::hana::to<const char*>(boost::hana::first(acc))), f, boost::hana::second(acc)(s),
               boost::hana::second(boost::hana::at_c<I>(boost::hana::accessors<std::remove_cvref_t<Ss>>()))(ss)...);
    };
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (member(std::integral_constant<std::size_t, I>{}), ...);
    }(std::make_index_sequence<n>{});
  }
}

// Σ over the tensors of S of Leaf(tensor type): elements (Leaf = size) or tensors (Leaf = 1).
template <class S, class Leaf>
constexpr std::size_t count_of(Leaf leaf) {
  using U = std::remove_cvref_t<S>;
  if constexpr (std::is_same_v<U, none>) return 0;
  else if constexpr (is_leaf_v<U>) return leaf(static_cast<const U*>(nullptr));
  else if constexpr (is_std_array<U>::value)
    return std::tuple_size_v<U> * count_of<typename U::value_type>(leaf);
  else {
    std::size_t n = 0;
    boost::hana::for_each(boost::hana::accessors<U>(), [&](auto pair) {
      using M = decltype(boost::hana::second(pair)(std::declval<U&>()));
      n += count_of<M>(leaf);
    });
    return n;
  }
}
template <class S>
constexpr std::size_t count_leaves_of() {
  return count_of<S>([](const auto* t) { return std::remove_cvref_t<decltype(*t)>::size; });
}
template <class S>
constexpr std::size_t count_tensors_of() {
  return count_of<S>([](const auto*) { return std::size_t{1}; });
}
}  // namespace detail

// f(name, leaf_of_s, leaf_of_ss...) for every tensor, in declaration order.
template <class F, class S, class... Ss>
constexpr void visit(F&& f, S& s, Ss&... ss) {
  static_assert((std::is_same_v<std::remove_cvref_t<S>, std::remove_cvref_t<Ss>> && ...),
                "sf::visit: the structs visited together must have the same type");
  detail::visit_at(param_name{}, f, s, ss...);
}

// The same walk over structs of different types whose members have the same names in the same
// order, e.g. float parameters and their int8 counterpart (sf::params<C, float> and
// sf::params<C, sf::int8>): f(name, leaf_of_s, leaf_of_ss...), leaves of different types.
template <class F, class S, class... Ss>
constexpr void visit_alike(F&& f, S& s, Ss&... ss) {
  detail::visit_at(param_name{}, f, s, ss...);
}

// Number of scalars in all tensors of S (a compile-time constant).
template <class S> inline constexpr std::size_t parameter_count = detail::count_leaves_of<S>();
// Number of tensors in S.
template <class S> inline constexpr std::size_t tensor_count = detail::count_tensors_of<S>();

// Set every tensor of s to zero.
template <class S>
constexpr void zero(S& s) {
  visit([](const param_name&, auto& t) { t.zero(); }, s);
}

}  // namespace sf
