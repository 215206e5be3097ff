// staticformer-generate — text from a checkpoint of examples/train, streamed as it is generated.
//
//   staticformer-generate out/train/model.safetensors --prompt "ROMEO:" -n 400 --temperature 0.8 --seed 7
//   staticformer-generate out/train/model.safetensors --int8 ...                 # int8 weights, quantized at load
//   staticformer-generate out/train/model.safetensors --save-int8 m8.safetensors -n 0   # write the int8 checkpoint
//   staticformer-generate out/train/model-int8.safetensors ...                   # an int8 checkpoint
//
// Reads the checkpoint's configuration from its metadata and runs the compiled configuration
// that matches it (tools/generate/generate.hpp lists them), with the tokenizer stored in the
// checkpoint (metadata "tokenizer.vocab"). The prompt is prefilled through the KV-cache
// decoder (sf::decoder, B = 1), then each token is sampled (sf::sampler), printed and flushed,
// and stepped; when the context is full, the last 3T/4 tokens are kept (decoder::slide), so any
// number of tokens can be generated. A statistics line (tokens/s of the generation, loading
// excluded) ends on stderr. Any error is one line on stderr and exit status 1.
//
// Translation units: this one (command line, file, tokenizer, prompt) and one per compiled
// configuration (tools/generate/<name>.cpp: loading, quantizing, decoding).
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "generate/generate.hpp"
#include "generate/weights.hpp"
#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/tokenizer.hpp"

namespace {

constexpr const char* program = "staticformer-generate";

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: staticformer-generate [options] CHECKPOINT\n"
               "Generates text with a model trained by examples/train (model.safetensors, or the int8\n"
               "model-int8.safetensors), streamed to stdout; a statistics line ends on stderr.\n"
               "  CHECKPOINT, --checkpoint PATH\n"
               "                       the model: float or int8 safetensors with its tokenizer\n"
               "  -p, --prompt TEXT    the text to continue (default: a newline); printed first\n"
               "  -n, --tokens N       characters to generate (default 200; any number: when the\n"
               "                       context is full, its last 3T/4 tokens are kept)\n"
               "  --temperature X      sampling temperature (default 0.8; 0 = greedy)\n"
               "  --top-k K            sample among the K most likely tokens only (default 0 = off)\n"
               "  --top-p P            nucleus sampling: the most likely tokens up to mass P (default 1 = off)\n"
               "  --seed S             the sampler's seed (default 1): the same seed, the same text\n"
               "  --int8               quantize a float checkpoint to int8 weights (Q8_0) at load\n"
               "                       (an int8 checkpoint is recognised by itself)\n"
               "  --save-int8 PATH     write the int8 checkpoint (with the tokenizer) to PATH, then\n"
               "                       generate as asked (float weights unless --int8; -n 0: nothing)\n"
               "  --no-echo            do not print the prompt, only the generated text\n"
               "  -q, --quiet          no statistics line\n"
               "  --list               the configurations compiled in\n"
               "  -h, --help           this text\n"
               "An option's value may also follow an equals sign: --tokens=400.\n"
               "Errors: one line on stderr, exit status 1.\n");
}

void list_configurations(std::FILE* to) {
  for (const sf_gen::compiled& c : sf_gen::configurations)
    std::fprintf(to, "  %-12s %s\n", c.name, sf::io::describe(c.config).c_str());
}

// An error: one line on stderr, exit status 1.
int fail(const std::string& message) {
  std::fprintf(stderr, "%s: %s\n", program, message.c_str());
  return 1;
}

// Strict number parsing: the whole text, nothing else.
bool parse_unsigned(const char* text, std::uint64_t& out) {
  if (*text < '0' || *text > '9') return false;  // no sign, no space
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (*end || errno == ERANGE) return false;
  out = v;
  return true;
}
bool parse_float(const char* text, float& out) {
  if (!*text || *text == ' ' || *text == '\t') return false;
  char* end = nullptr;
  const float v = std::strtof(text, &end);  // (out of range: ±inf or 0, for the sampler to judge)
  if (*end) return false;
  out = v;
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

template <std::size_t I = 0>
int dispatch(std::size_t which, const sf::io::file& f, const sf_gen::job& j) {
  if constexpr (I == sf_gen::configuration_count) {
    return 1;  // (not reached: `which` is an index of a compiled configuration)
  } else {
    if (which == I) return sf_gen::run<sf_gen::configurations[I].config>(f, j, sf_gen::configurations[I].name);
    return dispatch<I + 1>(which, f, j);
  }
}

}  // namespace

int main(int argc, char** argv) {
  sf_gen::job j;
  std::string prompt = "\n";
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    const char* inline_value = nullptr;  // --option=value
    if (a.size() > 2 && a[0] == '-' && a[1] == '-') {
      if (const std::size_t eq = a.find('='); eq != std::string::npos) {
        inline_value = argv[i] + eq + 1;
        a.resize(eq);
      }
    }
    bool missing = false, used_value = false;
    auto value = [&]() -> const char* {
      used_value = true;
      if (inline_value) return inline_value;
      if (i + 1 >= argc) {
        missing = true;
        return "";
      }
      return argv[++i];
    };
    std::uint64_t u = 0;
    float x = 0;
    const char* v = nullptr;
    if (a == "-h" || a == "--help") {
      usage(stdout);
      return 0;
    } else if (a == "--list") {
      list = true;
    } else if (a == "--int8") {
      j.int8 = true;
    } else if (a == "--no-echo") {
      j.echo = false;
    } else if (a == "-q" || a == "--quiet") {
      j.quiet = true;
    } else if (a == "--checkpoint") {
      j.path = value();
    } else if (a == "-p" || a == "--prompt") {
      prompt = value();
    } else if (a == "--save-int8") {
      j.save_int8 = value();
      if (!missing && j.save_int8.empty()) return fail(a + ": the path is empty");
    } else if (a == "-n" || a == "--tokens") {
      v = value();
      if (!missing && !parse_unsigned(v, u)) return fail(a + ": '" + v + "' is not a non-negative integer");
      j.tokens = static_cast<std::size_t>(u);
    } else if (a == "--top-k") {
      v = value();
      if (!missing && !parse_unsigned(v, u)) return fail(a + ": '" + v + "' is not a non-negative integer");
      j.sampling.top_k = static_cast<std::size_t>(u);
    } else if (a == "--seed") {
      v = value();
      if (!missing && !parse_unsigned(v, u)) return fail(a + ": '" + v + "' is not a non-negative integer");
      j.seed = u;
    } else if (a == "--temperature" || a == "--top-p") {
      v = value();
      if (!missing && !parse_float(v, x)) return fail(a + ": '" + v + "' is not a number");
      (a == "--temperature" ? j.sampling.temperature : j.sampling.top_p) = x;
    } else if (a.size() > 1 && a[0] == '-') {
      return fail("unknown option '" + a + "' (--help lists the options)");
    } else if (j.path.empty()) {
      j.path = a;
    } else {
      return fail("one checkpoint only: '" + j.path + "', then '" + a + "'");
    }
    if (missing) return fail(a + " needs a value");
    if (inline_value && !used_value) return fail(a + " takes no value");
  }
  if (list) {
    std::printf("Compiled configurations:\n");
    list_configurations(stdout);
    return 0;
  }
  if (j.path.empty())
    return fail(std::string("no checkpoint given (usage: ") + program + " [options] CHECKPOINT; --help lists the options)");

  // The file, its configuration, its tokenizer.
  const auto t0 = std::chrono::steady_clock::now();
  sf::io::result<sf::io::file> f = sf::io::file::open(j.path);
  if (!f) return fail(f.message());
  std::size_t which = 0;
  if (const std::string e = sf_gen::identify(*f, j.path, which, j.tokenizer); !e.empty()) return fail(e);

  // The prompt, in the checkpoint's vocabulary.
  if (prompt.empty()) return fail("--prompt: the prompt is empty (give at least one character)");
  for (std::size_t i = 0; i < prompt.size(); ++i) {
    const auto b = static_cast<unsigned char>(prompt[i]);
    if (!j.tokenizer.contains(b))
      return fail("the prompt's character " + shown(b) + " (byte " + std::to_string(b) + ") at offset " +
                  std::to_string(i) + " is not in the checkpoint's vocabulary (" + std::to_string(j.tokenizer.size()) +
                  " characters)");
  }
  if (sf::status s = j.tokenizer.encode(prompt, j.prompt); !s) return fail(std::string("--prompt: ") + s.message());
  j.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return dispatch(which, *f, j);
}
