// `staticformer export`: a checkpoint's weights (float or int8) and tokenizer as one self-contained
// C++ header of constant data, for firmware (tools/staticformer/engine_run.cpp; docs/tools.md).
//
// The header (namespace --namespace, default sf_model):
//   inline constexpr sf::arch config;               the checkpoint's architecture
//   inline constexpr unsigned char vocab[];          token id i is the byte vocab[i]; vocab_size
//   piece_offsets[], piece_bytes[], max_piece_bytes  what each token prints (sf::tokenizer::piece)
// or, for a checkpoint that carries llama2.c's BPE tokenizer (metadata tokenizer.bpe), instead of vocab:
//   #define SF_MODEL_BPE 1                           (the namespace in capitals, then _BPE: for #if)
//   bpe_bytes, bpe_offsets, bpe_scores, bpe_sorted   its tokenizer.bin as the tables of sf::bpe_tables
//                                                    (staticformer/bpe.hpp), bpe_sorted made here
//   inline constexpr sf::bpe_tokenizer tokenizer;    over them, checked at compile time: run.c's
//                                                    encode (<s>, the dummy prefix, the merges; at
//                                                    compile time or on the device) and piece_after
//   bpe_max_token_length                             the tokenizer.bin's max_token_length
//   piece_offsets[], piece_bytes[], max_piece_bytes  each piece on its own (tokenizer.piece(id))
//   using weights_type = sf::params<config> or sf::params<config, sf::int8>;
//   inline constexpr weights_type weights = {...};   constant-initialised: it lands in .rodata
//                                                    (flash) and the decoder reads it in place
//   weights_for<C>()                                 the weights, with a static_assert that C is
//                                                    the header's configuration
// The values are written exactly (floats as hex literals, int8 weights in the packed layout the
// kernels read), so the header's weights are bit-identical to the checkpoint's (int8: to
// sf::quantize of it, or to the int8 checkpoint). The initializer follows the parameter
// structs by their member names (sf::visit gives them in declaration order), with designated
// initializers, so nothing here lists the tensors.
#ifndef SF_TOOLS_EXPORT_HEADER_HPP
#define SF_TOOLS_EXPORT_HEADER_HPP

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "../generate/weights.hpp"
#include "config_literal.hpp"
#include "staticformer/bpe.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/quantize.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/tokenizer.hpp"

namespace sf_export {

inline const char* program = "staticformer export";  // the name that starts the messages

inline int fail(const std::string& m) {
  std::fprintf(stderr, "%s: %s\n", program, m.c_str());
  return 1;
}

// A float exactly: a hex literal, or its bits for an infinity or a NaN.
inline void put_float(std::ostream& o, float v) {
  if (std::isfinite(v)) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%af", static_cast<double>(v));
    o << buf;
  } else {
    std::uint32_t bits;
    std::memcpy(&bits, &v, 4);
    o << "std::bit_cast<float>(0x" << std::hex << bits << std::dec << "u)";
  }
}
template <class T>
void put_array(std::ostream& o, const T* v, std::size_t n) {
  o << '{';
  for (std::size_t i = 0; i < n; ++i) {
    if (i) o << (i % 16 ? "," : ",\n");
    if constexpr (std::is_same_v<T, float>) put_float(o, v[i]);
    else o << static_cast<long>(v[i]);
  }
  o << '}';
}

// Bytes as a string literal (printable ASCII as itself, the rest as three-digit octal escapes, a
// line per 64 bytes): the same chars whether char is signed or not.
inline void put_bytes(std::ostream& o, std::string_view b) {
  o << '"';
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i && i % 64 == 0) o << "\"\n\"";
    const auto c = static_cast<unsigned char>(b[i]);
    if (c == '"' || c == '\\') o << '\\' << static_cast<char>(c);
    else if (c >= 0x20 && c < 0x7f && c != '?') o << static_cast<char>(c);  // ('?': no trigraph, ever)
    else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", static_cast<unsigned>(c));
      o << buf;
    }
  }
  o << '"';
}

// The initializer as a tree of the dotted checkpoint names, in declaration order: a node's
// children are members (named) or the elements of a std::array (numbered).
struct node {
  std::string name;
  std::string leaf;  // the leaf's initializer; empty for an inner node
  std::vector<std::unique_ptr<node>> children;
  node* child(const std::string& n) {
    if (!children.empty() && children.back()->name == n) return children.back().get();
    children.push_back(std::make_unique<node>());
    children.back()->name = n;
    return children.back().get();
  }
};
inline bool numeric(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }
inline void emit(std::ostream& o, const node& n) {
  if (!n.leaf.empty()) {
    o << n.leaf;
    return;
  }
  const bool array = numeric(n.children.front()->name);
  o << (array ? "{{\n" : "{\n");
  for (std::size_t i = 0; i < n.children.size(); ++i) {
    if (i) o << ",\n";
    if (!array) o << '.' << n.children[i]->name << " = ";
    emit(o, *n.children[i]);
  }
  o << (array ? "}}" : "}");
}

template <class P>
node tree_of(const P& p) {
  node root;
  sf::visit(
      [&](const sf::param_name& name, const auto& leaf) {
        using L = std::remove_cvref_t<decltype(leaf)>;
        node* at = &root;
        std::string path(name.c_str(), name.size());
        for (std::size_t b = 0;;) {
          const std::size_t e = path.find('.', b);
          at = at->child(path.substr(b, e == std::string::npos ? std::string::npos : e - b));
          if (e == std::string::npos) break;
          b = e + 1;
        }
        std::ostringstream s;
        if constexpr (sf::detail::is_q8_weight<L>::value) {  // the packed arrays the kernels read
          s << "{.m = {.q = ";
          put_array(s, leaf.m.q, std::size(leaf.m.q));
          s << ",\n.d = ";
          put_array(s, leaf.m.d, std::size(leaf.m.d));
          s << ",\n.qsum = ";
          put_array(s, leaf.m.qsum, std::size(leaf.m.qsum));
          s << "}}";
        } else {
          s << '{';
          put_array(s, leaf.data(), L::size);
          s << '}';
        }
        at->leaf = s.str();
      },
      p);
  return root;
}

struct request {
  std::string input, output, ns = "sf_model";
  bool int8 = false;
};

// The tokenizer's part of the header: a character tokenizer's vocabulary (vocab[]), or llama2.c's
// BPE tokenizer's tables and the sf::bpe_tokenizer over them; then, for both, each token's piece.
inline void put_tokenizer(std::ostream& o, const request& r, const sf::io::any_tokenizer& any) {
  const std::size_t n = any.size();
  auto piece = [&](std::int32_t id) { return any.is_bpe() ? any.bpe()->piece(id) : any.chars()->piece(id); };
  if (const sf::char_tokenizer* tok = any.chars()) {
    o << "// The character tokenizer: token id i is the byte vocab[i].\n"
      << "inline constexpr std::size_t vocab_size = " << n << ";\n"
      << "inline constexpr unsigned char vocab[" << n << "] = ";
    std::vector<int> bytes;
    for (std::size_t i = 0; i < n; ++i) bytes.push_back(tok->byte(static_cast<std::int32_t>(i)));
    put_array(o, bytes.data(), bytes.size());
  } else {
    const sf::io::tokenizer_bin& bin = *any.bpe();
    const sf::bpe_tables& t = bin.core().tables();
    std::string upper = r.ns;
    for (char& c : upper)
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    o << "// llama2.c's BPE tokenizer (its tokenizer.bin, " << n << " pieces), as the tables of sf::bpe_tokenizer\n"
      << "// (staticformer/bpe.hpp), which encodes and prints as llama2.c's run.c, from flash, with no heap:\n"
      << "//   std::int32_t ids[" << r.ns << "::tokenizer.max_tokens(text)]; std::size_t n;   // (text.size() + 3)\n"
      << "//   " << r.ns << "::tokenizer.encode(text, ids, n);   // <s>, the dummy prefix \" \", the merges; also at compile time\n"
      << "//   sf::bpe_printable(" << r.ns << "::tokenizer.piece_after(prev, id));   // what run.c prints of id after prev\n"
      << "#define " << upper << "_BPE 1\n"
      << "inline constexpr std::size_t vocab_size = " << n << ";\n"
      << "inline constexpr std::uint32_t bpe_max_token_length = " << bin.max_token_length() << ";\n"
      << "// Piece i is bpe_bytes[bpe_offsets[i] .. bpe_offsets[i + 1]) (" << t.offsets[n] << " bytes; the literal's\n"
      << "// final NUL is not one of them), its merge score bpe_scores[i]; bpe_sorted: the ids by piece.\n"
      << "inline constexpr char bpe_bytes[" << t.offsets[n] + 1 << "] =\n";
    put_bytes(o, std::string_view(t.bytes.data(), t.offsets[n]));
    o << ";\ninline constexpr std::uint32_t bpe_offsets[" << n + 1 << "] = ";
    put_array(o, t.offsets.data(), n + 1);
    o << ";\ninline constexpr float bpe_scores[" << n << "] = ";
    put_array(o, t.scores.data(), n);
    o << ";\ninline constexpr std::int32_t bpe_sorted[" << n << "] = ";
    put_array(o, t.sorted.data(), n);
    o << ";\ninline constexpr sf::bpe_tables bpe_tables{.bytes = std::span<const char>(bpe_bytes, " << t.offsets[n]
      << "),\n                                          .offsets = bpe_offsets, .scores = bpe_scores, .sorted = bpe_sorted};\n"
      << "constexpr sf::bpe_tokenizer make_tokenizer() {\n"
      << "  sf::bpe_tokenizer t;\n  (void)sf::bpe_tokenizer::make(bpe_tables, t);  // (on error t stays empty)\n"
      << "  return t;\n}\n"
      << "inline constexpr sf::bpe_tokenizer tokenizer = make_tokenizer();\n"
      << "static_assert(tokenizer.size() == vocab_size, \"" << r.ns
      << "::tokenizer: the tables do not pass sf::bpe_tokenizer::make's checks\")";
  }
  // The pieces, through the tokenizer interface (sf::tokenizer): what a token prints, any length.
  std::vector<long> offsets{0}, piece_bytes;
  std::size_t longest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string_view p = piece(static_cast<std::int32_t>(i));
    for (const char c : p) piece_bytes.push_back(static_cast<unsigned char>(c));
    offsets.push_back(static_cast<long>(piece_bytes.size()));
    longest = std::max(longest, p.size());
  }
  o << ";\n\n// The pieces: token id i prints the bytes piece_bytes[piece_offsets[i] .. piece_offsets[i + 1])\n"
    << (any.is_bpe() ? "// (on its own: after <s>, tokenizer.piece_after drops a leading ' ', as run.c); the longest has\n"
                       "// max_piece_bytes.\n"
                     : "// (one for a character tokenizer; any number for others); the longest has max_piece_bytes.\n")
    << "inline constexpr std::size_t max_piece_bytes = " << longest << ";\n"
    << "inline constexpr unsigned piece_offsets[" << offsets.size() << "] = ";
  put_array(o, offsets.data(), offsets.size());
  o << ";\ninline constexpr unsigned char piece_bytes[" << piece_bytes.size() << "] = ";
  put_array(o, piece_bytes.data(), piece_bytes.size());
  o << ";\n";
}

template <sf::config C>
int export_config(const sf::io::file& f, const request& r, const sf::io::any_tokenizer& tok, const char* name) {
  static sf::params<C> p;
  static sf::params<C, sf::int8> q;
  const bool stored_int8 = sf_gen::is_int8(f), int8 = stored_int8 || r.int8;
  if (stored_int8) {
    if (sf::status s = sf_gen::weights<C>::load_int8(f, q); !s) return fail(r.input + ": " + s.message());
  } else {
    if (sf::status s = sf_gen::weights<C>::load_float(f, p); !s) return fail(r.input + ": " + s.message());
    if (int8) sf::quantize(q, p);
  }
  const node root = int8 ? tree_of(q) : tree_of(p);
  const std::string described = sf::io::describe(C);
  std::ofstream o(r.output, std::ios::binary);
  if (!o) return fail("cannot write '" + r.output + "'");
  o << "// Generated by " << program << " from " << r.input << " - do not edit.\n"
    << "// Configuration " << name << ": " << described << "; " << (int8 ? "int8 (Q8_0)" : "float")
    << " weights, " << (int8 ? sizeof(q) : sizeof(p)) << " bytes of constant data.\n"
    << "//   static sf::decoder<" << r.ns << "::config" << (int8 ? ", sf::int8" : "") << "> dec;\n"
    << "//   dec.use(" << r.ns << "::weights_for<" << r.ns << "::config>());   // read in place, from flash\n"
    << "#pragma once\n#include <bit>\n#include <cstddef>\n"
    << (tok.is_bpe() ? "#include <cstdint>\n#include <span>\n" : "") << "\n"
    << (tok.is_bpe() ? "#include \"staticformer/bpe.hpp\"\n" : "") << "#include \"staticformer/params.hpp\"\n"
    << (int8 ? "#include \"staticformer/quantize.hpp\"\n" : "") << "\nnamespace " << r.ns << " {\n\n"
    << "inline constexpr sf::arch config" << config_literal(C) << ";\n\n";
  put_tokenizer(o, r, tok);
  o << "\nusing weights_type = sf::params<config" << (int8 ? ", sf::int8" : "") << ">;\n"
    << "// (The initializer names the members that exist; the absent ones, sf::none, are left out.)\n"
    << "#pragma GCC diagnostic push\n#pragma GCC diagnostic ignored \"-Wmissing-field-initializers\"\n"
    << "alignas(64) inline constexpr weights_type weights = ";
  emit(o, root);
  o << ";\n#pragma GCC diagnostic pop\n\n// The weights for a program's configuration C: C must be this header's.\n"
    << "template <sf::config C>\nconstexpr const weights_type& weights_for() {\n"
    << "  static_assert(sf::arch_of(C) == config,\n"
    << "                \"" << r.ns << "::weights_for<C>: these weights are for the configuration " << described
    << " (" << name << "); the program's configuration C differs - export the checkpoint of the model this "
       "program runs, or use "
    << r.ns << "::config\");\n  return weights;\n}\n\n}  // namespace " << r.ns << "\n";
  o.close();
  if (!o) return fail("cannot write '" + r.output + "'");
  std::fprintf(stderr, "%s: wrote %s (%s, %s weights%s)\n", program, r.output.c_str(), name,
               int8 ? "int8" : "float", tok.is_bpe() ? ", BPE tokenizer" : "");
  return 0;
}

}  // namespace sf_export

#endif  // SF_TOOLS_EXPORT_HEADER_HPP
