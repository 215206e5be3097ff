// staticformer/shape_error.hpp — shape errors whose first diagnostic line names the shapes.
//
// A C++20 static_assert message must be a string literal, so it cannot print the shapes of
// the operands. The shape checks (matmul.hpp, tensor.hpp, config.hpp) therefore report a
// failure through SF_SHAPE_ERROR("message", E), where E describes the operation and its
// operands in the library's terms, e.g. for y = x·w with x (T=64, T=64) and w (D=64, D=64):
//
//   SF_SHAPE_ERROR("sf::matmul(Y, X, W): the last axis of X must be the first axis of W",
//                  shape_error::matmul<shape_error::X_is<shape_error::T<64>, shape_error::T<64>>,
//                                      shape_error::W_is<shape_error::D<64>, shape_error::D<64>>>);
//
// and the compiler's first `error:` line reads
//
//   g++:   error: invalid use of incomplete type 'struct sf::shape_error::report<sf::shape_error::text{
//          "sf::matmul(Y, X, W): X is (T=64, T=64), W is (D=64, D=64); the last axis of X must be ..."}>'
//   clang: error: static_assert failed due to requirement 'matmul<sf::shape_error::X_is<
//          sf::shape_error::T<64>, ...>, sf::shape_error::W_is<...>>::ok' "sf::matmul(Y, X, W): ..."
//
// g++ prints a class-type template argument holding characters as a string, so there the
// message and the shapes are formatted into one text at compile time (render below) and the
// error is the use of an incomplete type named by that text. clang 14 prints such an argument
// as a list of numbers, so there the error is a static_assert whose (always false) condition
// names the description type E: its template arguments spell the shapes as T<64>, D<64>, ...
//
// Cost: nothing here is instantiated unless a check fails (the checks call SF_SHAPE_ERROR in
// the discarded branch of an `if constexpr`); a successful compile only parses this header.
// docs/shape-errors.md shows what each compiler prints for every test in test/compile_fail/.
#pragma once
#include <cstddef>

#include "staticformer/axis.hpp"

namespace sf::shape_error {

// ---------------------------------------------------------------- axes: T<64> reads "T=64"
template <class Tag, std::size_t N> struct token_base {
  static constexpr const char* name = Tag::name;
  static constexpr std::size_t size = N;
};
template <std::size_t N> struct B : token_base<tag::batch, N> {};
template <std::size_t N> struct T : token_base<tag::seq, N> {};
template <std::size_t N> struct D : token_base<tag::model, N> {};
template <std::size_t N> struct H : token_base<tag::heads, N> {};
template <std::size_t N> struct dk : token_base<tag::head_dim, N> {};
template <std::size_t N> struct F : token_base<tag::ffn, N> {};
template <std::size_t N> struct V : token_base<tag::vocab, N> {};
struct kv_heads_tag {
  static constexpr const char* name = "kv_heads";
};
template <std::size_t N> struct kv_heads : token_base<kv_heads_tag, N> {};

// The token of an axis; an axis with a user tag stays sf::axis<Tag, N> (printed Tag::name=N).
template <class A> struct token { using type = A; };
template <std::size_t N> struct token<axis<tag::batch, N>> { using type = B<N>; };
template <std::size_t N> struct token<axis<tag::seq, N>> { using type = T<N>; };
template <std::size_t N> struct token<axis<tag::model, N>> { using type = D<N>; };
template <std::size_t N> struct token<axis<tag::heads, N>> { using type = H<N>; };
template <std::size_t N> struct token<axis<tag::head_dim, N>> { using type = dk<N>; };
template <std::size_t N> struct token<axis<tag::ffn, N>> { using type = F<N>; };
template <std::size_t N> struct token<axis<tag::vocab, N>> { using type = V<N>; };
template <class A> using token_t = typename token<A>::type;

// ---------------------------------------------------------------- operands: X_is<T<64>, D<64>>
template <class... Tok> struct X_is { static constexpr const char* name = "X"; };
template <class... Tok> struct W_is { static constexpr const char* name = "W"; };
template <class... Tok> struct Y_is { static constexpr const char* name = "Y"; };
template <class... Tok> struct A_is { static constexpr const char* name = "A"; };
template <class... Tok> struct B_is { static constexpr const char* name = "B"; };
template <class... Tok> struct C_is { static constexpr const char* name = "C"; };
template <class... Tok> struct b_is { static constexpr const char* name = "b"; };
template <class... Tok> struct db_is { static constexpr const char* name = "db"; };
template <class... Tok> struct dy_is { static constexpr const char* name = "dy"; };
template <class... Tok> struct lhs_is { static constexpr const char* name = "lhs"; };
template <class... Tok> struct rhs_is { static constexpr const char* name = "rhs"; };
template <class... Tok> struct x_is { static constexpr const char* name = "x"; };
// The number of indices given to tensor::operator().
template <std::size_t N> struct indices {};

// An operand from an sf::shape: role_t<X_is, shape<Seq<64>, Model<64>>> is X_is<T<64>, D<64>>.
template <template <class...> class Role, class Shape> struct role;
template <template <class...> class Role, class... A> struct role<Role, shape<A...>> {
  using type = Role<token_t<A>...>;
};
template <template <class...> class Role, class Shape> using role_t = typename role<Role, Shape>::type;

// ---------------------------------------------------------------- the operations
// Descriptions of a failed check; `ok` is the (false) condition clang prints.
template <class... Parts> struct matmul { static constexpr bool ok = false; };
template <class... Parts> struct matmul_nt { static constexpr bool ok = false; };
template <class... Parts> struct matmul_tn { static constexpr bool ok = false; };
template <class... Parts> struct matmul_bias { static constexpr bool ok = false; };
template <class... Parts> struct matmul_backward_bias { static constexpr bool ok = false; };
template <class... Parts> struct elementwise { static constexpr bool ok = false; };
template <class... Parts> struct index { static constexpr bool ok = false; };
template <class... Parts> struct config { static constexpr bool ok = false; };

// ---------------------------------------------------------------- g++: one text
// A structural class: as a template argument g++ prints it as {"..."}.
inline constexpr std::size_t text_capacity = 480;
struct text {
  char value[text_capacity];
};
template <text> struct report;  // never defined: using it is the error
// Instantiated by SF_SHAPE_ERROR: the error is in this class, so the function that reports it
// stays a valid constant expression (no second error where it is called).
template <text S> struct raise : report<S> {};

namespace render_detail {
struct writer {
  text t{};
  std::size_t n = 0;
  constexpr void put(char c) {
    if (n + 1 < text_capacity) t.value[n++] = c;
  }
  constexpr void put(const char* s) {
    while (*s) put(*s++);
  }
  constexpr void put_number(std::size_t v) {
    char digits[24]{};
    std::size_t k = 0;
    do {
      digits[k++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    while (k > 0) put(digits[--k]);
  }
};

template <class Tok> struct part {  // an axis token: "T=64"
  static constexpr void put(writer& w) {
    w.put(Tok::name);
    w.put('=');
    w.put_number(Tok::size);
  }
};
template <class Tag, std::size_t N> struct part<axis<Tag, N>> {
  static constexpr void put(writer& w) {
    w.put(tag_name<Tag>());
    w.put('=');
    w.put_number(N);
  }
};
template <template <class...> class Role, class... Tok>
  requires requires { Role<Tok...>::name; }
struct part<Role<Tok...>> {  // an operand: "X is (T=64, D=64)"
  static constexpr void put(writer& w) {
    w.put(Role<Tok...>::name);
    w.put(" is (");
    bool first = true;
    ((w.put(first ? "" : ", "), part<Tok>::put(w), first = false), ...);
    w.put(')');
  }
};
template <std::size_t N> struct part<indices<N>> {
  static constexpr void put(writer& w) {
    w.put_number(N);
    w.put(N == 1 ? " index" : " indices");
  }
};

template <class E> struct parts;
template <template <class...> class Op, class... P> struct parts<Op<P...>> {
  static constexpr void put(writer& w) {
    bool first = true;
    ((w.put(first ? "" : ", "), part<P>::put(w), first = false), ...);
  }
};
}  // namespace render_detail

// "op: hint" -> "op: <the parts of E>; hint"
template <class E>
consteval text render(const char* message) {
  render_detail::writer w;
  const char* p = message;
  while (*p && !(p[0] == ':' && p[1] == ' ')) w.put(*p++);
  if (*p) {
    w.put(": ");
    p += 2;
  } else {
    w.put(": ");
  }
  render_detail::parts<E>::put(w);
  if (*p) w.put("; ");
  w.put(p);
  return w.t;
}

}  // namespace sf::shape_error

// SF_SHAPE_ERROR("message", E): fails the compilation with one error whose line names the
// operation and the shapes described by E (a dependent type, see above; it may contain commas).
// Use it only in a branch that is instantiated when the check fails:
//   if constexpr (!ok) SF_SHAPE_ERROR("sf::op(...): what is wrong; the fix", shape_error::op<...>);
#if defined(__clang__)
#define SF_SHAPE_ERROR(message, ...) static_assert(__VA_ARGS__::ok, message)
#else
#define SF_SHAPE_ERROR(message, ...)                                                                        \
  do {                                                                                                      \
    constexpr ::sf::shape_error::text sf_shape_error_text_ = ::sf::shape_error::render<__VA_ARGS__>(message); \
    (void)sizeof(::sf::shape_error::raise<sf_shape_error_text_>);                                           \
  } while (false)
#endif
