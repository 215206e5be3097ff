// The `staticformer` command's inference executable for one architecture (engine.hpp):
//
//   run MODEL [-t T] [-p P] [-s S] [-n N] [-i PROMPT] [-z TOKENIZER] [-m generate] [--int8] [-q]
//       [--tokens N] [--top-k K] [--sampler llama2c|staticformer] [--save-int8 PATH] [--no-echo]
//       [--eval FILE]
//   export MODEL -o HEADER [--int8] [--namespace NAME]
//   convert MODEL -o OUT --int8          (--llama2c VERSION: done by `staticformer` itself, main.cpp)
//
// `run` takes llama2.c's run.c flags and reads them as run.c does: -t temperature (default 1.0;
// 0 = greedy), -p top-p (default 0.9; 1 = off), -s seed (default: the time), -n the number of
// positions, the prompt's included (default 256, 0 = the context length; past the context the
// stream slides, keeping its last 3T/4 tokens, where run.c stops), -i the prompt, -z the
// tokenizer.bin of llama2.c's model file (a staticformer checkpoint carries its own tokenizer: a
// character one, or llama2.c's BPE one, which prompts, prints and counts -n as run.c does),
// -m generate (chat is run.c's other mode: not offered). It samples by run.c's recipe (its random
// numbers, softmax and nucleus: sf::sampling_recipe::llama2c), for every model. It prints the
// prompt and the text as it is generated, then on stderr run.c's "achieved tok/s" line and a line
// of statistics (-q: neither).
// Beyond run.c: --tokens N (generate N tokens, whatever the prompt's length), --sampler staticformer
// (the library's own recipe, sf::sampler's default), --top-k K (K > 0: the library's recipe, which has it),
// --save-int8 PATH (write the int8 checkpoint; with --tokens 0 only that), --no-echo (do not print
// the prompt), --eval FILE (print the mean loss of the file's text through the decoder, in windows
// of the context length, instead of generating: float and --int8 weights compared on one text), and
// the long names --prompt, --temperature, --top-p, --seed, --steps (also as --name=value).
// The generation itself is tools/generate/run.hpp; export writes the header of
// tools/export/header.hpp; convert writes the int8 checkpoint.
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../export/header.hpp"
#include "../generate/generate.hpp"
#include "../generate/run.hpp"
#include "../generate/weights_impl.hpp"
#include "engine.hpp"
#include "staticformer/io/gguf.hpp"
#include "staticformer/io/hf_llama.hpp"
#include "staticformer/io/llama2c.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/io/tokenizer_bin.hpp"

namespace {

using sf_engine::arch;
using sf_engine::fail;

// The streams of `bench --decode`'s decoder (SF_ENGINE_STREAMS: `staticformer` compiles an executable
// with more than one for it; `run` has one).
#ifndef SF_ENGINE_STREAMS
#define SF_ENGINE_STREAMS 1
#endif
constexpr std::size_t streams = SF_ENGINE_STREAMS;

// A flag's value, parsed strictly (the whole argument).
bool as_float(const char* text, float& out) {
  double v = 0;
  if (!sf::io::parse_number(text, v, {})) return false;
  out = static_cast<float>(v);
  return true;
}

// A byte for a message: 'a', or '\x80' when not printable.
std::string shown(unsigned char b) {
  char buf[8];
  if (b >= 32 && b < 127) std::snprintf(buf, sizeof buf, "'%c'", b);
  else if (b == '\n') std::snprintf(buf, sizeof buf, "'\\n'");
  else if (b == '\t') std::snprintf(buf, sizeof buf, "'\\t'");
  else std::snprintf(buf, sizeof buf, "'\\x%02x'", b);
  return buf;
}

// --eval FILE's text; "" or what went wrong.
std::string read_eval_text(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "--eval: cannot open '" + path + "'";
  text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return "--eval: cannot read '" + path + "'";
  return {};
}

// The name of the architecture in messages: a known shape's, else its description.
std::string arch_name() {
  for (const sf::configs::named& k : sf::configs::known)
    if (sf::arch_of(k.value) == arch) return k.name;
  return sf::io::describe(arch);
}

// The job of `options` with tokenizer `tok` (of another type than options').
template <class Tok>
sf_gen::job<Tok> with_tokenizer(const sf_gen::job<>& options, Tok tok) {
  sf_gen::job<Tok> j;
  j.path = options.path;
  j.tokenizer = std::move(tok);
  j.sampling = options.sampling;
  j.seed = options.seed;
  j.int8 = options.int8;
  j.save_int8 = options.save_int8;
  j.echo = options.echo;
  j.quiet = options.quiet;
  j.program = options.program;
  j.runc_stats = options.runc_stats;
  j.eval_path = options.eval_path;
  j.bench_streams = options.bench_streams;
  j.bench_repeat = options.bench_repeat;
  j.loaded = options.loaded;
  return j;
}

// `run` with llama2.c's BPE tokenizer, of a checkpoint f that carries one or of llama2.c's model
// file: the prompt encoded as run.c encodes it (BOS first), the text printed as run.c prints it (the
// piece after the previous token; a lone byte that is not printable is not printed; a BOS ends the
// text; a newline at the end). -n counts the tokens printed, the prompt's included but not its BOS
// (run.c: -n forward passes, each printing the token after its position: of a prompt of more tokens
// only the first -n are printed); --tokens counts the generated tokens. `t0`: when loading began.
int run_bpe(const sf::io::file& f, sf_gen::job<sf::io::tokenizer_bin>& j, const std::string& prompt, long long steps,
            long long tokens, std::chrono::steady_clock::time_point t0) {
  if (sf::status s = j.tokenizer.encode(prompt, j.prompt); !s) return fail("run", std::string("-i: ") + s.message());
  if (!j.eval_path.empty()) {  // --eval: the file's text as run.c encodes a prompt (BOS first)
    std::string text;
    if (std::string e = read_eval_text(j.eval_path, text); !e.empty()) return fail("run", e);
    if (sf::status s = j.tokenizer.encode(text, j.eval); !s) return fail("run", "--eval " + j.eval_path + ": " + s.message());
    if (j.eval.size() < 2) return fail("run", "--eval " + j.eval_path + ": fewer than 2 tokens");
  }
  const std::size_t positions = steps == 0 ? arch.T : static_cast<std::size_t>(steps), printed = j.prompt.size() - 1;
  j.tokens = tokens >= 0 ? static_cast<std::size_t>(tokens) : positions > printed ? positions - printed : 0;
  if (tokens < 0 && positions < printed) j.prompt.resize(positions + 1);  // run.c prints the first -n of a longer prompt
  j.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string name = arch_name();
  return sf_gen::run<arch, streams>(f, j, name.c_str());
}

// What `run` frees once the weights are loaded (sf_gen::job::loaded): the file the weights were
// read from (a checkpoint's bytes, or the header of one read in place) and the tensors it reads in
// place (a llama2.c, GGUF or Hugging Face model's values). The process then holds the file's values
// and the weights, then the weights and the decoder's copies, never the three at once.
void release(sf::io::file& f) { const sf::io::file gone = std::move(f); }
template <class Tensors>
void release(sf::io::file& f, Tensors& tensors) {
  release(f);
  const Tensors gone = std::move(tensors);
}

// The int8 checkpoint of `bytes` (llama2c_int8_checkpoint_bytes, gguf_int8_checkpoint_bytes), as a file.
sf::io::result<sf::io::file> int8_checkpoint(sf::io::result<std::vector<std::byte>> bytes, const std::string& path) {
  if (!bytes) return bytes.status();
  return sf::io::file::parse(std::move(*bytes), path);
}

// `run` for llama2.c's model file (versions 0, 1, 2: sf::io::read_llama2c) with its tokenizer.bin
// (run_bpe). The model goes through the checkpoint path in memory, so the generation is the same
// code as a checkpoint's (tools/generate/run.hpp): versions 0 and 1 as a float checkpoint (--int8
// quantizes it), version 2 on the int8 decoder, as runq.c runs it.
int run_llama2c(const sf_gen::job<>& options, const std::string& prompt, const std::string& tokenizer_path,
                long long steps, long long tokens) {
  if (!options.save_int8.empty())
    return fail("run", "--save-int8: " + options.path + " is a llama2.c model file (write its int8 form with llama2.c's export.py --version 2)", 2);
  const auto t0 = std::chrono::steady_clock::now();
  // A version 2 file's Q8_0 groups as the int8 checkpoint (the int8 decoder, the file's own int8
  // values); groups that are not a multiple of 32 (e.g. 4, what export.py picks for a hidden width
  // of 172) are requantized in groups of 32 from their values. Groups taken as they are need no
  // float values: the file is read without them (four times the groups' memory).
  sf::io::result<sf::io::llama2c_model> h = sf::io::read_llama2c_header(options.path);
  if (!h) return fail("run", h.message());
  const bool q8_as_is = h->version == 2 && h->group_size % 32 == 0;
  sf::io::result<sf::io::llama2c_model> m = sf::io::read_llama2c(options.path, {.dequantize = !q8_as_is});
  if (!m) return fail("run", m.message());
  if (m->version != h->version || m->group_size != h->group_size)
    return fail("run", options.path + ": the file changed while it was read");
  if (m->arch != arch)
    return fail("run", options.path + ": its architecture (" + sf::io::describe(m->arch) + ") is not this executable's (" +
                           sf::io::describe(arch) + ")");
  sf::io::result<sf::io::tokenizer_bin> t = sf::io::tokenizer_bin::open(tokenizer_path, arch.V);
  if (!t) return fail("run", "-z " + tokenizer_path + ": " + t.message());
  sf_gen::job<sf::io::tokenizer_bin> j = with_tokenizer(options, std::move(*t));
  if (m->version == 2 && !q8_as_is) {
    j.int8 = true;
    if (!j.quiet)
      std::fprintf(stderr, "%s: %s: Q8_0 groups of %zu requantized in groups of 32 (staticformer's int8)\n",
                   j.program, options.path.c_str(), m->group_size);
  }
  sf::io::result<sf::io::file> f = q8_as_is ? int8_checkpoint(sf::io::llama2c_int8_checkpoint_bytes(*m), j.path)
                                            : sf::io::model_checkpoint_file(m->arch, m->tensors, {}, j.path);
  m->quantized = {};
  if (q8_as_is) m->tensors = {};  // (the float checkpoint reads m->tensors where they are: m outlives it)
  if (!f) return fail("run", f.message());
  j.loaded = [&] { release(*f, m->tensors); };
  return run_bpe(*f, j, prompt, steps, tokens, t0);
}

// `run` for a Hugging Face Llama directory (sf::io::read_hf_llama): its tokenizer.model (or tokenizer.json) as
// llama2.c's tokenizer (or -z's tokenizer.bin), the weights through a checkpoint in memory, so the
// generation is run_bpe's, as for llama2.c's files.
int run_hf(const sf_gen::job<>& options, const std::string& prompt, const std::string& tokenizer_path, long long steps,
           long long tokens) {
  if (!options.save_int8.empty())
    return fail("run", "--save-int8: " + options.path + " is a Hugging Face directory (convert it to a checkpoint first)", 2);
  const auto t0 = std::chrono::steady_clock::now();
  sf::io::result<sf::io::hf_llama_model> m = sf::io::read_hf_llama(options.path);
  if (!m) return fail("run", m.message());
  if (m->arch != arch)
    return fail("run", options.path + ": its architecture (" + sf::io::describe(m->arch) + ") is not this executable's (" +
                           sf::io::describe(arch) + ")");
  sf::io::tokenizer_bin tok;
  if (!tokenizer_path.empty()) {
    sf::io::result<sf::io::tokenizer_bin> t = sf::io::tokenizer_bin::open(tokenizer_path, arch.V);
    if (!t) return fail("run", "-z " + tokenizer_path + ": " + t.message());
    tok = std::move(*t);
  } else if (m->tokenizer) {
    if (m->tokenizer->size() != arch.V)
      return fail("run", options.path + "/" + m->tokenizer_file + " has " + std::to_string(m->tokenizer->size()) +
                             " pieces; vocab_size is " + std::to_string(arch.V) + ": they must be equal (or -z a tokenizer.bin)");
    tok = std::move(*m->tokenizer);
  } else {
    return fail("run", options.path + ": no tokenizer.model nor tokenizer.json (give llama2.c's tokenizer.bin with -z)");
  }
  sf_gen::job<sf::io::tokenizer_bin> j = with_tokenizer(options, std::move(tok));
  // (the checkpoint reads m's tensors where they are: m outlives it)
  sf::io::result<sf::io::file> f = sf::io::model_checkpoint_file(m->arch, m->tensors, {}, j.path);
  if (!f) return fail("run", f.message());
  j.loaded = [&] { release(*f, m->tensors); };
  return run_bpe(*f, j, prompt, steps, tokens, t0);
}

// `run` for a GGUF file (sf::io::read_gguf) with its own tokenizer (tokenizer.ggml.*), or the
// tokenizer.bin of -z, through the checkpoint path in memory, as run_llama2c: a file whose every
// matrix is Q8_0 on the int8 decoder with its own blocks, else the float weights (--int8 quantizes
// them in groups of 32).
int run_gguf(const sf_gen::job<>& options, const std::string& prompt, const std::string& tokenizer_path, long long steps,
             long long tokens) {
  if (!options.save_int8.empty())
    return fail("run", "--save-int8: " + options.path + " is a GGUF file (convert it to a checkpoint first)", 2);
  const auto t0 = std::chrono::steady_clock::now();
  // (Q8_0 blocks without their float values unless --int8 asks to quantize the floats: read again
  // with them below if the int8 checkpoint cannot take the blocks.)
  sf::io::result<sf::io::gguf_model> m = sf::io::read_gguf(options.path, {.dequantize = options.int8});
  if (!m) return fail("run", m.message());
  if (m->arch != arch)
    return fail("run", options.path + ": its architecture (" + sf::io::describe(m->arch) + ") is not this executable's (" +
                           sf::io::describe(arch) + ")");
  sf::io::result<sf::io::tokenizer_bin> t =
      tokenizer_path.empty() ? sf::io::gguf_tokenizer(*m) : sf::io::tokenizer_bin::open(tokenizer_path, arch.V);
  if (!t)
    return fail("run", (tokenizer_path.empty() ? options.path + ": " : "-z " + tokenizer_path + ": ") + t.message());
  sf_gen::job<sf::io::tokenizer_bin> j = with_tokenizer(options, std::move(*t));
  // Every matrix Q8_0 in the file: the int8 decoder on the file's own blocks (as run_llama2c runs a
  // version-2 file); else the float weights. A file whose blocks the int8 checkpoint cannot hold
  // (-128, a negative scale) runs its dequantized weights, with a note.
  std::optional<sf::io::result<sf::io::file>> f;
  if (!m->quantized.empty() && !j.int8) {
    sf::io::result<std::vector<std::byte>> q8 = sf::io::gguf_int8_checkpoint_bytes(*m);
    if (q8) {
      f = int8_checkpoint(std::move(q8), j.path);
    } else {
      if (m->quantized.size() + m->arch.L * 2 + 1 == sf::io::gguf_tensor_shapes(m->arch).size() && !j.quiet)
        std::fprintf(stderr, "%s: %s: its Q8_0 weights run dequantized (%s)\n", j.program, options.path.c_str(), q8.message());
      const sf::arch read_first = m->arch;
      m = sf::io::read_gguf(options.path);  // the float values, this time
      if (!m) return fail("run", m.message());
      if (m->arch != read_first) return fail("run", options.path + ": the file changed while it was read");
    }
  }
  if (f) m->tensors = {};  // (the norms' values, in the int8 checkpoint now; no other values were read)
  if (!f) f = sf::io::model_checkpoint_file(m->arch, m->tensors, {}, j.path);  // (m outlives it: gguf_checkpoint_bytes' file)
  m->quantized = {};
  if (!*f) return fail("run", f->message());
  j.loaded = [&] { release(**f, m->tensors); };
  return run_bpe(**f, j, prompt, steps, tokens, t0);
}

// `run`, or (bench) `bench --decode`: the same model files and options, and --streams LIST
// (default 1,4,16: each at most this executable's streams), --repeat K, --decode (ignored).
int run(int argc, char** argv, bool bench = false) {
  sf_gen::job<> j;
  j.program = bench ? "staticformer bench" : "staticformer run";
  if (bench) j.bench_streams = {1, 4, 16};
  j.runc_stats = true;
  // run.c's defaults and recipe
  j.sampling = {.temperature = 1.0f, .top_k = 0, .top_p = 0.9f, .recipe = sf::sampling_recipe::llama2c};
  if (bench) j.sampling.temperature = 0.0f;  // (the bench times decoding: greedy unless -t says otherwise)
  long long seed = 0, steps = 256, tokens = -1;
  std::string prompt, tokenizer, recipe;  // recipe: --sampler's value
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    const char* inline_value = nullptr;  // --option=value
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      if (const std::size_t eq = a.find('='); eq != std::string::npos) {
        inline_value = argv[i] + eq + 1;
        a.resize(eq);
      }
    }
    // Long names (those of the former staticformer-generate): each is one of run.c's flags.
    if (a == "--prompt") a = "-i";
    else if (a == "--temperature") a = "-t";
    else if (a == "--top-p") a = "-p";
    else if (a == "--seed") a = "-s";
    else if (a == "--steps") a = "-n";
    const bool flag = a == "--int8" || a == "-q" || a == "--quiet" || a == "--no-echo";
    if (flag && inline_value) return fail("run", a + " takes no value", 2);
    if (a == "--int8") {
      j.int8 = true;
      continue;
    }
    if (a == "--no-echo") {
      j.echo = false;
      continue;
    }
    if (bench && a == "--decode") continue;
    if (bench && (a == "--streams" || a == "--repeat")) {
      if (!inline_value && i + 1 >= argc) return fail("bench", a + " needs a value", 2);
      const std::string v = inline_value ? inline_value : argv[++i];
      if (a == "--repeat") {
        if (!sf::io::parse_integer(std::string_view(v), j.bench_repeat, std::size_t{1}, std::size_t{1000}))
          return fail("bench", "--repeat: '" + v + "' is not an integer in [1, 1000]", 2);
        continue;
      }
      j.bench_streams.clear();
      for (std::size_t at = 0; at <= v.size();) {  // a comma-separated list
        const std::size_t end = std::min(v.find(',', at), v.size());
        std::size_t n = 0;
        if (!sf::io::parse_integer(std::string_view(v).substr(at, end - at), n, std::size_t{1}, streams))
          return fail("bench", "--streams: '" + v + "' is not a list of counts in [1, " + std::to_string(streams) +
                                   "] (this executable's streams)", 2);
        j.bench_streams.push_back(n);
        at = end + 1;
      }
      continue;
    }
    if (a == "-q" || a == "--quiet") {
      j.quiet = true;
      j.runc_stats = false;
      continue;
    }
    const bool valued = (a.size() == 2 && a[0] == '-' && a[1] != '-') || a == "--tokens" || a == "--top-k" ||
                        a == "--save-int8" || a == "--sampler" || a == "--eval";
    if (valued) {
      if (!inline_value && i + 1 >= argc) return fail("run", a + " needs a value", 2);
      const char* v = inline_value ? inline_value : argv[++i];
      const char k = a.size() == 2 ? a[1] : 0;
      std::size_t u = 0;
      if (k == 't' || k == 'p') {
        if (!as_float(v, k == 't' ? j.sampling.temperature : j.sampling.top_p))
          return fail("run", a + ": '" + v + "' is not a number", 2);
      } else if (k == 's' || k == 'n') {
        if (!sf::io::parse_integer(std::string_view(v), k == 's' ? seed : steps, k == 's' ? -(1LL << 62) : 0LL,
                                   1LL << 40))
          return fail("run", a + ": '" + v + "' is not " + (k == 's' ? "an integer" : "a non-negative integer"), 2);
      } else if (a == "--tokens") {
        if (!sf::io::parse_integer(std::string_view(v), tokens, 0LL, 1LL << 40))
          return fail("run", a + ": '" + v + "' is not a non-negative integer", 2);
      } else if (a == "--top-k") {
        if (!sf::io::parse_integer(std::string_view(v), u, std::size_t{0}, std::size_t{1} << 40))
          return fail("run", a + ": '" + v + "' is not a non-negative integer", 2);
        j.sampling.top_k = u;
      } else if (a == "--sampler") {
        recipe = v;
        if (recipe != "llama2c" && recipe != "staticformer")
          return fail("run", a + ": '" + recipe + "' is not llama2c (run.c's recipe, the default) or staticformer",
                      2);
      } else if (a == "--eval") {
        j.eval_path = v;
        if (j.eval_path.empty()) return fail("run", a + ": the path is empty", 2);
      } else if (a == "--save-int8") {
        j.save_int8 = v;
        if (j.save_int8.empty()) return fail("run", a + ": the path is empty", 2);
      } else if (k == 'i') {
        prompt = v;
      } else if (k == 'z') {
        tokenizer = v;
      } else if (k == 'm') {
        if (std::string_view(v) != "generate")
          return fail("run", std::string("-m ") + v + ": only the generate mode is offered (run.c's chat mode is not)", 2);
      } else if (k == 'y') {
        return fail("run", "-y (a system prompt) belongs to run.c's chat mode, which is not offered", 2);
      } else {
        return fail("run", "unknown option '" + a + "' (staticformer run --help lists them)", 2);
      }
    } else if (!a.empty() && a[0] == '-') {
      return fail("run", "unknown option '" + a + "' (staticformer run --help lists them)", 2);
    } else if (j.path.empty()) {
      j.path = a;
    } else {
      return fail("run", "one model only: '" + j.path + "', then '" + a + "'", 2);
    }
  }
  if (j.path.empty()) return fail("run", "no model given (staticformer run MODEL [options])", 2);
  // As run.c: a negative temperature is 0 (greedy); a top-p outside [0, 1] is 0.9, and 0 or 1
  // turn the nucleus filter off.
  if (j.sampling.temperature < 0.0f) j.sampling.temperature = 0.0f;
  if (!(j.sampling.top_p >= 0.0f && j.sampling.top_p <= 1.0f)) j.sampling.top_p = 0.9f;
  if (j.sampling.top_p == 0.0f) j.sampling.top_p = 1.0f;
  // run.c's recipe has no top-k: --top-k K > 0 takes the library's, unless --sampler says otherwise.
  if (recipe == "staticformer" || (recipe.empty() && j.sampling.top_k > 0))
    j.sampling.recipe = sf::sampling_recipe::staticformer;
  else if (j.sampling.top_k > 0)
    return fail("run", "--top-k: llama2.c's recipe (--sampler llama2c) has no top-k", 2);
  // As run.c: the seed is the generator's state, a negative one modulo 2^64; 0 is the time.
  j.seed = seed != 0 ? static_cast<std::uint64_t>(seed) : static_cast<std::uint64_t>(std::time(nullptr));
  // A Hugging Face Llama directory: its tokenizer.model, or -z's tokenizer.bin.
  if (sf::io::is_hf_directory(j.path)) return run_hf(j, prompt, tokenizer, steps, tokens);
  // A llama2.c model file (not a safetensors checkpoint): its tokenizer is a tokenizer.bin.
  if (std::FILE* g = std::fopen(j.path.c_str(), "rb")) {  // a GGUF file: its own tokenizer, or -z's
    char magic[4] = {};
    const bool gguf = std::fread(magic, 1, 4, g) == 4 && std::string_view(magic, 4) == "GGUF";
    std::fclose(g);
    if (gguf) return run_gguf(j, prompt, tokenizer, steps, tokens);
  }
  if (!sf::io::file::open(j.path)) return run_llama2c(j, prompt, tokenizer.empty() ? "tokenizer.bin" : tokenizer, steps, tokens);
  if (!tokenizer.empty())
    return fail("run", "-z " + tokenizer + ": " + j.path +
                           " carries its own tokenizer (its metadata 'tokenizer.vocab' or 'tokenizer.bpe'); a "
                           "tokenizer file serves llama2.c's model files",
                2);

  const auto t0 = std::chrono::steady_clock::now();
  sf::io::result<sf::io::file> f = sf_engine::open_model(j.path);
  if (!f) return fail("run", f.message());
  sf::io::any_tokenizer tok;
  if (const std::string e = sf_gen::read_tokenizer(*f, j.path, arch.V, tok); !e.empty()) return fail("run", e);
  j.loaded = [&] { release(*f); };
  if (const sf::io::tokenizer_bin* bpe = tok.bpe()) {  // llama2.c's tokenizer: run.c's prompt, text and -n
    sf_gen::job<sf::io::tokenizer_bin> jb = with_tokenizer(j, *bpe);
    return run_bpe(*f, jb, prompt, steps, tokens, t0);
  }
  j.tokenizer = *tok.chars();
  // The prompt, in the model's vocabulary; an empty one starts from a newline (when the
  // vocabulary has one, else token 0), which is not printed.
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    const auto b = static_cast<unsigned char>(prompt[i]);
    if (!j.tokenizer.contains(b))
      return fail("run", "the prompt's character " + shown(b) + " (byte " + std::to_string(b) + ") at offset " +
                             std::to_string(i) + " is not in the checkpoint's vocabulary (" +
                             std::to_string(j.tokenizer.size()) + " characters)");
  }
  if (prompt.empty()) {
    j.prompt.assign(1, j.tokenizer.contains('\n') ? j.tokenizer.id('\n') : 0);
    j.echo = false;
  } else if (sf::status s = j.tokenizer.encode(prompt, j.prompt); !s) {
    return fail("run", std::string("-i: ") + s.message());
  }
  if (!j.eval_path.empty()) {  // --eval: the file's characters, each in the vocabulary
    std::string text;
    if (std::string e = read_eval_text(j.eval_path, text); !e.empty()) return fail("run", e);
    for (std::size_t i = 0; i < text.size(); ++i)
      if (!j.tokenizer.contains(static_cast<unsigned char>(text[i])))
        return fail("run", "--eval " + j.eval_path + ": the character " + shown(static_cast<unsigned char>(text[i])) +
                               " at offset " + std::to_string(i) + " is not in the checkpoint's vocabulary");
    if (sf::status s = j.tokenizer.encode(text, j.eval); !s) return fail("run", "--eval " + j.eval_path + ": " + s.message());
    if (j.eval.size() < 2) return fail("run", "--eval " + j.eval_path + ": fewer than 2 tokens");
  }
  // -n counts positions, the prompt's included (run.c); --tokens counts the generated tokens.
  const std::size_t positions = steps == 0 ? arch.T : static_cast<std::size_t>(steps);
  j.tokens = tokens >= 0 ? static_cast<std::size_t>(tokens)
                         : positions > j.prompt.size() ? positions - j.prompt.size() : 0;
  j.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string name = arch_name();
  return sf_gen::run<arch, streams>(*f, j, name.c_str());
}

int export_header(int argc, char** argv) {
  sf_export::request r;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-o" || a == "--output" || a == "--namespace") {
      if (i + 1 >= argc) return fail("export", a + " needs a value", 2);
      (a == "--namespace" ? r.ns : r.output) = argv[++i];
    } else if (a == "--int8") {
      r.int8 = true;
    } else if (!a.empty() && a[0] == '-') {
      return fail("export", "unknown option '" + a + "' (staticformer export --help lists them)", 2);
    } else if (r.input.empty()) {
      r.input = a;
    } else {
      return fail("export", "one model only ('" + a + "')", 2);
    }
  }
  if (r.input.empty() || r.output.empty()) return fail("export", "usage: staticformer export MODEL -o HEADER", 2);
  if (r.ns.empty() || r.ns.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789") !=
                          std::string::npos || (r.ns[0] >= '0' && r.ns[0] <= '9'))
    return fail("export", "--namespace needs a C++ identifier", 2);
  sf::io::result<sf::io::file> f = sf_engine::open_model(r.input);
  if (!f) return fail("export", f.message());
  sf::io::any_tokenizer tok;
  if (const std::string e = sf_gen::read_tokenizer(*f, r.input, arch.V, tok); !e.empty()) return fail("export", e);
  return sf_export::export_config<arch>(*f, r, tok, arch_name().c_str());  // (a character or a BPE tokenizer)
}

int convert(int argc, char** argv) {
  std::string in, out;
  bool int8 = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-o" || a == "--output") {
      if (i + 1 >= argc) return fail("convert", a + " needs a value", 2);
      out = argv[++i];
    } else if (a == "--int8") {
      int8 = true;
    } else if (!a.empty() && a[0] == '-') {
      return fail("convert", "unknown option '" + a + "' (staticformer convert --help lists them)", 2);
    } else if (in.empty()) {
      in = a;
    } else {
      return fail("convert", "one model only ('" + a + "')", 2);
    }
  }
  if (in.empty() || out.empty() || !int8)  // (--llama2c is done by `staticformer` itself)
    return fail("convert", "usage: staticformer convert MODEL -o OUT --int8", 2);
  sf::io::result<sf::io::file> f = sf_engine::open_model(in);
  if (!f) return fail("convert", f.message());
  if (sf_gen::is_int8(*f)) return fail("convert", in + ": already int8");
  sf_gen::job<> options;
  options.program = "staticformer convert";
  options.path = in;
  options.save_int8 = out;
  sf::io::any_tokenizer tok;
  if (const std::string e = sf_gen::read_tokenizer(*f, in, arch.V, tok); !e.empty()) return fail("convert", e);
  return tok.visit([&](const auto& t) {  // loads, quantizes, saves (with the tokenizer); generates nothing
    auto j = with_tokenizer(options, t);
    j.tokens = 0;
    return sf_gen::run<arch, streams>(*f, j, arch_name().c_str());
  });
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "";
  if (command == "run") return run(argc, argv);
  if (command == "bench") return run(argc, argv, /*bench=*/true);
  if (command == "export") return export_header(argc, argv);
  if (command == "convert") return convert(argc, argv);
  if (command == "--architecture") {  // what this executable was compiled for
    std::printf("%s\n", sf::io::describe(arch).c_str());
    return 0;
  }
  std::fprintf(stderr, "%s: run, bench, export or convert (this executable serves `staticformer`; run that)\n", argv[0]);
  return 2;
}
