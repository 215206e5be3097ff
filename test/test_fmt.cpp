// staticformer/fmt.hpp: axes, shapes, tensors (numpy-like, summarised when large), configs,
// statuses and parameter names. Every expected string is written out in full.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "staticformer/fmt.hpp"
#include "staticformer/params.hpp"

namespace {
struct my_tag {};  // a user tag without a name
}  // namespace

TEST(Fmt, Axis) {
  EXPECT_EQ(fmt::format("{}", sf::Seq<64>{}), "T=64");
  EXPECT_EQ(fmt::format("{}", sf::Model<64>{}), "D=64");
  EXPECT_EQ(fmt::format("{}", sf::Batch<4>{}), "B=4");
  EXPECT_EQ(fmt::format("{}", sf::Heads<6>{}), "H=6");
  EXPECT_EQ(fmt::format("{}", sf::HeadDim<8>{}), "dk=8");
  EXPECT_EQ(fmt::format("{}", sf::Ffn<256>{}), "F=256");
  EXPECT_EQ(fmt::format("{}", sf::Vocab<65>{}), "V=65");
  EXPECT_EQ(fmt::format("{}", sf::axis<my_tag, 3>{}), "?=3");
  EXPECT_EQ(fmt::format("[{:>6}]", sf::Seq<64>{}), "[  T=64]");
  EXPECT_EQ(fmt::format("[{:<6}]", sf::Seq<64>{}), "[T=64  ]");
}

TEST(Fmt, Shape) {
  EXPECT_EQ(fmt::format("{}", sf::shape<sf::Batch<4>, sf::Seq<64>, sf::Model<64>>{}), "(B=4, T=64, D=64)");
  EXPECT_EQ(fmt::format("{}", sf::shape<sf::Model<32>>{}), "(D=32)");
  using btd = sf::types<sf::configs::nano>::btd;
  EXPECT_EQ(fmt::format("{}", btd::shape_type{}), "(B=4, T=64, D=64)");
  EXPECT_EQ(fmt::format("{:*^21}", btd::shape_type{}), "**(B=4, T=64, D=64)**");
}

TEST(Fmt, SmallTensors) {
  const auto v = sf::make_tensor<sf::tensor<int, sf::Model<4>>>(1, 2, 3, 4);
  EXPECT_EQ(fmt::format("{}", v), "(D=4) [1, 2, 3, 4]");

  // right-aligned to the widest element, continuation lines under the first '['
  const auto m = sf::make_tensor<sf::tensor<int, sf::Seq<2>, sf::Model<3>>>(1, 2, 3, 4, 50, -6);
  EXPECT_EQ(fmt::format("{}", m),
            "(T=2, D=3) [[ 1,  2,  3],\n"
            "            [ 4, 50, -6]]");

  // rank 3: a blank line between the matrices, as numpy does
  const auto c = sf::make_tensor<sf::tensor<int, sf::Batch<2>, sf::Seq<2>, sf::Model<2>>>(0, 1, 2, 3, 4, 5, 6, 7);
  EXPECT_EQ(fmt::format("{}", c),
            "(B=2, T=2, D=2) [[[0, 1],\n"
            "                  [2, 3]],\n"
            "\n"
            "                 [[4, 5],\n"
            "                  [6, 7]]]");

  // unsigned char (the padding mask) prints as numbers
  const auto p = sf::make_tensor<sf::tensor<std::uint8_t, sf::Seq<3>>>(0, 1, 1);
  EXPECT_EQ(fmt::format("{}", p), "(T=3) [0, 1, 1]");
}

TEST(Fmt, ElementSpec) {
  const auto f = sf::make_tensor<sf::tensor<float, sf::Seq<2>, sf::Model<2>>>(0.5f, -1.25f, 3.0f, 0.1f);
  EXPECT_EQ(fmt::format("{}", f),
            "(T=2, D=2) [[  0.5, -1.25],\n"
            "            [    3,   0.1]]");
  EXPECT_EQ(fmt::format("{:.2f}", f),
            "(T=2, D=2) [[ 0.50, -1.25],\n"
            "            [ 3.00,  0.10]]");
  EXPECT_EQ(fmt::format("{:+.1e}", sf::make_tensor<sf::tensor<double, sf::Model<2>>>(1.0, -0.5)),
            "(D=2) [+1.0e+00, -5.0e-01]");
  // an invalid spec is rejected (at compile time for literal format strings; here at run time)
  EXPECT_THROW((void)fmt::format(fmt::runtime("{:q}"), f), fmt::format_error);
}

TEST(Fmt, ThresholdIsInclusive) {
  // exactly sf::print_threshold (1000) elements: everything is printed
  static sf::tensor<int, sf::Seq<10>, sf::Model<100>> t;
  for (std::size_t i = 0; i < t.size; ++i) t[i] = static_cast<int>(i);
  const std::string s = fmt::format("{}", t);
  EXPECT_EQ(s.find("..."), std::string::npos);
  EXPECT_NE(s.find(" 999]]"), std::string::npos);
  EXPECT_NE(s.find("[100, 101,"), std::string::npos);
}

TEST(Fmt, LargeTensorIsSummarisedLikeNumpy) {
  // 40 x 30 = 1200 > 1000 elements: 3 entries at each end of each axis longer than 6
  static sf::tensor<int, sf::Seq<40>, sf::Model<30>> t;
  for (std::size_t i = 0; i < t.size; ++i) t[i] = static_cast<int>(i);
  EXPECT_EQ(fmt::format("{}", t),
            "(T=40, D=30) [[   0,    1,    2, ...,   27,   28,   29],\n"
            "              [  30,   31,   32, ...,   57,   58,   59],\n"
            "              [  60,   61,   62, ...,   87,   88,   89],\n"
            "              ...,\n"
            "              [1110, 1111, 1112, ..., 1137, 1138, 1139],\n"
            "              [1140, 1141, 1142, ..., 1167, 1168, 1169],\n"
            "              [1170, 1171, 1172, ..., 1197, 1198, 1199]]");
}

TEST(Fmt, LargeRank3KeepsShortAxes) {
  // (B=2, T=50, D=20): B is short (2 <= 6) and kept whole; T and D are summarised
  static sf::tensor<int, sf::Batch<2>, sf::Seq<50>, sf::Model<20>> t;
  for (std::size_t i = 0; i < t.size; ++i) t[i] = static_cast<int>(i);
  EXPECT_EQ(fmt::format("{}", t),
            "(B=2, T=50, D=20) [[[   0,    1,    2, ...,   17,   18,   19],\n"
            "                    [  20,   21,   22, ...,   37,   38,   39],\n"
            "                    [  40,   41,   42, ...,   57,   58,   59],\n"
            "                    ...,\n"
            "                    [ 940,  941,  942, ...,  957,  958,  959],\n"
            "                    [ 960,  961,  962, ...,  977,  978,  979],\n"
            "                    [ 980,  981,  982, ...,  997,  998,  999]],\n"
            "\n"
            "                   [[1000, 1001, 1002, ..., 1017, 1018, 1019],\n"
            "                    [1020, 1021, 1022, ..., 1037, 1038, 1039],\n"
            "                    [1040, 1041, 1042, ..., 1057, 1058, 1059],\n"
            "                    ...,\n"
            "                    [1940, 1941, 1942, ..., 1957, 1958, 1959],\n"
            "                    [1960, 1961, 1962, ..., 1977, 1978, 1979],\n"
            "                    [1980, 1981, 1982, ..., 1997, 1998, 1999]]]");
}

TEST(Fmt, Status) {
  EXPECT_EQ(fmt::format("{}", sf::status::ok()), "ok");
  EXPECT_EQ(fmt::format("{}", sf::status::error("tok_emb.weight: expected [", 65, ", 32], found [", 64, ", 32]")),
            "error: tok_emb.weight: expected [65, 32], found [64, 32]");
  EXPECT_EQ(fmt::format("[{:>4}]", sf::status::ok()), "[  ok]");
}

TEST(Fmt, Config) {
  EXPECT_EQ(fmt::format("{}", sf::configs::ref_gpt2),
            "config{V=65, T=16, D=32, H=4, L=2, F=128, B=2, norm=layernorm, position=learned, "
            "activation=gelu_tanh, tied=true, bias=true, norm_eps=1e-05}");
  EXPECT_EQ(fmt::format("{}", sf::configs::ref_llama),
            "config{V=96, T=24, D=48, H=6, L=3, F=96, B=3, norm=rmsnorm, position=rope, "
            "activation=relu, tied=false, bias=false, norm_eps=1e-05}");
  EXPECT_EQ(fmt::format("{}", sf::configs::ref_vaswani),
            "config{V=50, T=12, D=40, H=5, L=1, F=160, B=1, norm=layernorm, position=sinusoidal, "
            "activation=gelu, tied=false, bias=true, norm_eps=1e-05}");
  sf::config c = sf::configs::nano;
  c.norm_eps = 1e-6;
  EXPECT_EQ(fmt::format("{}", c),
            "config{V=65, T=64, D=64, H=4, L=2, F=256, B=4, norm=layernorm, position=learned, "
            "activation=gelu_tanh, tied=true, bias=true, norm_eps=1e-06}");
  EXPECT_EQ(fmt::format("{} {} {}", sf::norm_kind::rmsnorm, sf::position_kind::sinusoidal, sf::activation_kind::gelu),
            "rmsnorm sinusoidal gelu");
}

TEST(Fmt, ParameterNamesAndShapes) {
  static sf::params<sf::configs::ref_llama> p;
  std::vector<std::string> lines;
  sf::visit([&](const sf::param_name& n, const auto& t) {
    lines.push_back(fmt::format("{} {}", n, typename std::remove_cvref_t<decltype(t)>::shape_type{}));
  }, p);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], "tok_emb.weight (V=96, D=48)");
  EXPECT_EQ(lines[1], "blocks.0.norm1.weight (D=48)");
  EXPECT_EQ(lines[2], "blocks.0.attn.wq (D=48, D=48)");
  EXPECT_EQ(lines.back(), "lm_head.weight (D=48, V=96)");
}

TEST(Fmt, CoexistsWithFmtRanges) {
  // fmt.hpp includes <fmt/ranges.h>; a tensor (which has begin/end) must still use its own
  // formatter, and ordinary ranges must still format as ranges.
  static_assert(!fmt::is_range<sf::tensor<float, sf::Model<2>>, char>::value);
  EXPECT_EQ(fmt::format("{}", std::vector<int>{1, 2}), "[1, 2]");
  EXPECT_EQ(fmt::format("{}", sf::make_tensor<sf::tensor<int, sf::Model<2>>>(1, 2)), "(D=2) [1, 2]");
}
