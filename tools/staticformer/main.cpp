// staticformer — one command for a model of any architecture.
//
//   staticformer train --config FILE.json --data TEXT (--steps N | --seconds S) --out MODEL.safetensors [options]
//   staticformer run MODEL [-t T] [-p P] [-s S] [-n N] [-i PROMPT]        (llama2.c's run.c flags)
//   staticformer export MODEL -o HEADER [--int8]
//   staticformer convert MODEL -o OUT --int8 | --llama2c VERSION [--tokenizer-out TOKENIZER.bin]
//   staticformer convert MODEL.bin [-z TOKENIZER.bin] -o OUT.safetensors  (llama2.c's file to a checkpoint)
//   staticformer convert HF_DIR [-z TOKENIZER.bin] -o OUT.safetensors     (a Hugging Face Llama directory)
//   staticformer convert MODEL.gguf -o OUT.safetensors | MODEL -o OUT.gguf --gguf f32|f16|q8_0   (GGUF)
//   staticformer info MODEL | --config FILE.json      staticformer bench MODEL | --config FILE.json
//   staticformer --version                            the version; the instruction sets of the products, this CPU's
//
// This program holds no model: it reads the architecture (a checkpoint's metadata, or the JSON of
// --config with the same keys) and hands the command line to an executable compiled for that
// architecture (tools/staticformer/engine_run.cpp for run, export and convert;
// engine_train.cpp for train and bench, also compiled for the run settings --batch and
// --precision). Those of the shapes CMake compiled in advance (STATICFORMER_PRECOMPILED_MODELS,
// names from sf::configs::known) are used as they are; any other is compiled on first use with
// the system's C++ compiler and the installed headers into a cache directory
// ($STATICFORMER_CACHE, else $XDG_CACHE_HOME/staticformer, else ~/.cache/staticformer), one
// directory per architecture, run settings, compiler and staticformer build, and found there
// afterwards. How to compile comes from a file CMake writes (build.txt: the compiler, the flags,
// the include directories, the sources, the directories of the headers they include and the
// library they link), beside this program in a build tree or in share/staticformer/ of an
// installation. The cache directory's name holds a hash of all of it — build.txt, the engine's
// source, and the contents of every file under the `depends=` directories and of the `link=`
// files — so that an executable compiled before a header or the library changed is not reused —
// and, when the flags hold -march=native, this CPU's instruction sets (staticformer/cpu.hpp), so that
// a cache shared with another CPU never hands it an executable compiled for instructions it lacks.
// `convert --llama2c`, and `convert` of llama2.c's model file, need no executable: this program
// reads and writes llama2.c's files and the float checkpoint itself.
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "../export/config_literal.hpp"
#include "../generate/generate.hpp"
#include "bpe_vocab.hpp"
#include "cpu_key.hpp"
#include "staticformer/config.hpp"
#include "staticformer/cpu_report.hpp"
#include "staticformer/io/any_tokenizer.hpp"
#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/hf_llama.hpp"
#include "staticformer/io/gguf.hpp"
#include "staticformer/io/llama2c.hpp"
#include "staticformer/io/quantized.hpp"
#include "staticformer/io/safetensors_format.hpp"
#include "staticformer/params.hpp"
#include "staticformer/tokenizer.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;

int fail(const std::string& message, int status = 1) {
  std::fprintf(stderr, "staticformer: %s\n", message.c_str());
  return status;
}
// "staticformer run: message", as the executables of the commands write theirs.
int fail_in(const std::string& command, const std::string& message, int status = 1) {
  std::fprintf(stderr, "staticformer %s: %s\n", command.c_str(), message.c_str());
  return status;
}

// "MODEL: neither a staticformer checkpoint (why) nor a llama2.c model file (why)".
std::string neither(const std::string& model, const std::string& not_checkpoint, const std::string& not_llama2c) {
  return model + ": neither a staticformer checkpoint (" + not_checkpoint + ") nor a llama2.c model file (" +
         not_llama2c + ")";
}

// What `staticformer COMMAND --help` prints of the usage text: the command's entry.
struct usage_entry {
  std::string_view command;
  const char* text;
};
constexpr usage_entry usage_entries[] = {
    {"train",
     "  train --config FILE.json --data TEXT (--steps N | --seconds S) --out MODEL.safetensors\n"
     "        [--tokenizer TOKENIZER.bin] [--batch B] [--precision f32|bf16] [--lr X] [--seed K]\n"
     "        [--threads N] [--eval-every N] [--eval-batches N] [--warmup F] [--min-lr-ratio R] [--beta2 X]\n"
     "        [--clip X]\n"
     "        trains a model of the architecture in FILE.json (the checkpoint's metadata keys: vocab,\n"
     "        context, d_model, n_heads, n_layers, d_ff, norm, position, activation, tied, bias,\n"
     "        norm_eps) on a text with a character tokenizer, or with llama2.c's BPE tokenizer.bin of\n"
     "        vocab pieces (--tokenizer); the tokenizer goes into the checkpoint. AdamW (beta2 0.999),\n"
     "        lr 4e-3 warmed up over 5% of the steps (--warmup 0.05) then cosine down to\n"
     "        --min-lr-ratio times lr (0), clipping at 1 (--clip, 0: none), the validation loss every\n"
     "        steps/10 over 32 batches (--eval-every, --eval-batches; 0: the whole split).\n"
     "        --steps N runs all N steps, the same bits every time. --seconds S, a budget of the training\n"
     "        loop in CPU seconds (wall-clock with --threads > 1): alone, sizes the schedule from the\n"
     "        step rate measured over its first 2.5% so that warm-up and cosine end at 95% of it\n"
     "        (and shortens the rest if the rate falls; no two such runs are alike); with --steps N,\n"
     "        stops a run that has not finished and says so. The last line: final: steps K of N (P%\n"
     "        of the schedule), ...\n"},
    {"run",
     "  run MODEL [-t temperature] [-p top-p] [-s seed] [-n steps] [-i prompt] [-z tokenizer]\n"
     "        [-m generate] [--int8] [-q]   (MODEL: a checkpoint, llama2.c's .bin, a Hugging Face directory)\n"
     "        generates text; the flags are llama2.c's run.c's, with its defaults (-t 1.0 -p 0.9,\n"
     "        -s the time, -n 256 positions including the prompt's; 0 = the context length) and its\n"
     "        sampling (--sampler staticformer or --top-k K: the library's own); --eval FILE prints\n"
     "        the mean loss of FILE's text instead (float weights, or int8 with --int8)\n"},
    {"export", "  export MODEL -o HEADER [--int8] [--namespace NAME]   the model as a C++ header, for firmware\n"},
    {"convert",
     "  convert MODEL -o OUT --int8                          the int8 (Q8_0) checkpoint\n"
     "  convert MODEL -o OUT.bin --llama2c VERSION [--tokenizer-out TOKENIZER.bin] [--group-size G]\n"
     "        llama2.c's model file, version 0 (run.c), 1 or 2 (runq.c, Q8_0 groups of G: 64, halved until\n"
     "        it divides the widths, as export.py), and the\n"
     "        checkpoint's BPE tokenizer as llama2.c's tokenizer.bin. MODEL may be llama2.c's model file\n"
     "        (any version) too: a version-2 one keeps its groups as version 2 (its own group size) and\n"
     "        gives its dequantized weights as version 0 or 1\n"
     "  convert MODEL.bin [-z TOKENIZER.bin] -o OUT.safetensors\n"
     "        llama2.c's model file (any version) as a float checkpoint, carrying its tokenizer.bin\n"
     "  convert HF_DIR [-z TOKENIZER.bin] -o OUT.safetensors\n"
     "        a Hugging Face Llama directory (config.json, model.safetensors or its shards,\n"
     "        tokenizer.model or tokenizer.json) as a float checkpoint, carrying its tokenizer\n"
     "  convert MODEL.gguf [-z TOKENIZER.bin] -o OUT.safetensors\n"
     "        a GGUF file (llama; F32, F16, Q8_0) as a float checkpoint, carrying its tokenizer\n"
     "  convert MODEL -o OUT.gguf --gguf f32|f16|q8_0 [-z TOKENIZER.bin]\n"
     "        a GGUF file, a float checkpoint, llama2.c's model file or a Hugging Face directory as GGUF (llama):\n"
     "        matrices float32, float16 (the norms float32) or Q8_0; a GGUF file's own type without --gguf\n"
     "  convert MODEL -o DIR --hf [--dtype float32|float16|bfloat16] [--max-shard-size SIZE] [-z TOKENIZER.bin]\n"
     "        a float checkpoint, llama2.c's model file, a GGUF file or a Hugging Face directory as a\n"
     "        Hugging Face Llama directory (config.json, model.safetensors float32 unless --dtype says otherwise,\n"
     "        tokenizer.model, tokenizer.json); past SIZE (transformers' max_shard_size: 10GB, 40KB, 1MiB...)\n"
     "        the weights go in shards, model-00001-of-0000N.safetensors, with model.safetensors.index.json\n"},
    {"info", "  info MODEL | --config FILE.json                      the architecture, and its executables\n"
             "        (MODEL: a checkpoint, a Hugging Face directory, a GGUF file or llama2.c's model file);\n"
             "        the instruction sets of the float, bf16 and int8 products, and this CPU's\n"},
    {"--version", "  --version                                            the version; the products' instruction sets, this CPU's\n"},
    {"bench",
     "  bench [MODEL | --config FILE.json] [--steps N] [--batch B] [--precision P] [--threads N]\n"
     "        the time of a training step\n"
     "  bench MODEL --decode [--streams 1,4,16] [--repeat K] [--int8] [-i prompt] [-n N | --tokens N]\n"
     "        the time of decoding: for each count R, R streams step together (one read of the weights\n"
     "        per step); a step's time (each stream's latency per token) and the aggregate tokens/s\n"
     "        (MODEL: any file `run` takes, with its flags; compiled on first use for max(R) streams)\n"},
    {"header",
     "  header MODEL | --config FILE.json -o FILE [--kind run|train] [--batch B] [--precision P]\n"
     "        writes the architecture as the C++ header the executables are compiled with\n"
     "        (SF_ENGINE_ARCH, SF_ENGINE_BATCH, SF_ENGINE_PRECISION; CMake's staticformer_add_model)\n"},
};

// The usage text: every command's entry, or only `command`'s.
std::string usage(std::string_view command = {}) {
  std::string text = "usage: staticformer COMMAND [arguments]\n";
  for (const usage_entry& e : usage_entries)
    if (command.empty() || e.command == command) text += e.text;
  return text +
         "An architecture that has no executable yet gets one compiled on first use (tens of seconds,\n"
         "once): the compiler is $STATICFORMER_CXX or the one staticformer was built with, the cache\n"
         "$STATICFORMER_CACHE, $XDG_CACHE_HOME/staticformer or ~/.cache/staticformer.\n";
}

// ---------------------------------------------------------------- the architecture

// --config FILE.json: an object of docs/model.md's metadata keys, with JSON values (numbers,
// strings, booleans) or the metadata's strings.
sf::io::result<sf::arch> read_config_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return sf::status::error(("cannot open '" + path + "': " + std::strerror(errno)).c_str());
  // At most 1 MiB and one byte more, to tell a larger file: reading a whole stream first would
  // never end for --config /dev/zero (or fill the memory for a huge file).
  constexpr std::size_t limit = std::size_t{1} << 20;
  std::string text(limit + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > limit) return sf::status::error(("'" + path + "': larger than 1 MiB").c_str());
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return sf::status::error(("'" + path + "': not a JSON object (expected {\"vocab\": 65, \"context\": 64, ...})").c_str());
  sf::io::metadata_map m{{"format", "staticformer"}};
  for (const auto& [key, value] : j.items()) {
    if (!sf::io::detail::is_config_key(key)) {
      std::string known = sf::io::detail::config_key_list();
      if (known.rfind("format, ", 0) == 0) known.erase(0, 8);  // (the JSON file does not hold it)
      return sf::status::error(("'" + path + "': unknown key \"" + key + "\"" +
                                (key == "batch" || key == "B" ? " (the batch size is a run setting: --batch)" : "") +
                                "; the keys are " + known)
                                   .c_str());
    }
    if (value.is_string()) m[key] = value.get<std::string>();
    else if (value.is_boolean()) m[key] = value.get<bool>() ? "true" : "false";
    else if (value.is_number_unsigned()) m[key] = std::to_string(value.get<std::uint64_t>());
    else if (value.is_number_integer()) m[key] = std::to_string(value.get<std::int64_t>());
    else if (value.is_number_float()) m[key] = sf::io::detail::format_double(value.get<double>());
    else return sf::status::error(("'" + path + "': \"" + key + "\" must be a number, a string or a boolean").c_str());
  }
  sf::io::result<sf::arch> c = sf::io::config_from_metadata(m);
  if (!c) return sf::status::error(("'" + path + "': " + c.message()).c_str());
  return c;
}

// The name of a known shape with this architecture (sf::configs::known), or nullptr.
const sf::configs::named* known_shape(const sf::arch& arch) {
  for (const sf::configs::named& k : sf::configs::known)
    if (sf::arch_of(k.value) == arch) return &k;
  return nullptr;
}

// ---------------------------------------------------------------- how to compile (build.txt)

struct build_info {
  std::string text;  // the file, for the cache key
  std::string cxx;
  std::vector<std::string> flags, includes, links, depends;
  std::vector<std::string> own_flags;  // flag.cxx=: for the compiler of cxx= only (g++'s own options)
  std::string source_run, source_train, source_check, precompiled, version;
  mutable std::string digest;  // dependency_digest's, once computed
};

std::string self_path() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

// build.txt beside this program (a build tree), or in ../share/staticformer (an installation,
// where @PREFIX@ stands for the installation's prefix).
std::string read_build_info(build_info& b) {
  const fs::path exe = self_path();
  if (exe.empty()) return "cannot find this program's own path (/proc/self/exe)";
  const fs::path dir = exe.parent_path(), prefix = dir.parent_path();
  fs::path file = dir / "staticformer-build.txt";
  if (!fs::exists(file)) file = prefix / "share" / "staticformer" / "build.txt";
  std::ifstream in(file);
  if (!in) return "cannot read " + file.string() + " (how to compile for a new architecture); reinstall staticformer";
  std::string line;
  while (std::getline(in, line)) {
    b.text += line + "\n";
    for (std::size_t at; (at = line.find("@PREFIX@")) != std::string::npos;) line.replace(at, 8, prefix.string());
    const std::size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    const std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "cxx") b.cxx = value;
    else if (key == "flag") b.flags.push_back(value);
    else if (key == "flag.cxx") b.own_flags.push_back(value);
    else if (key == "include") b.includes.push_back(value);
    else if (key == "link") b.links.push_back(value);
    else if (key == "depends") b.depends.push_back(value);
    else if (key == "source.run") b.source_run = value;
    else if (key == "source.train") b.source_train = value;
    else if (key == "source.check") b.source_check = value;
    else if (key == "precompiled") b.precompiled = value;
    else if (key == "version") b.version = value;
  }
  if (const char* cxx = std::getenv("STATICFORMER_CXX"); cxx && *cxx && b.cxx != cxx) {
    b.cxx = cxx;
    b.text += std::string("cxx=") + cxx + "\n";
  } else {  // the build's own compiler: its own options too (another may not know them)
    b.flags.insert(b.flags.end(), b.own_flags.begin(), b.own_flags.end());
  }
  if (b.cxx.empty() || b.source_run.empty() || b.source_train.empty()) return file.string() + ": incomplete";
  return "";
}

// ---------------------------------------------------------------- the executable of an architecture

struct engine {
  std::string kind;  // "run" or "train"
  std::size_t batch = 1;
  sf::precision_kind precision = sf::precision_kind::f32;
  std::size_t streams = 1;  // run: the decoder streams of `bench --decode` (1: `run`)
};

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h;
}

// The file's contents ("" if unreadable): the sources go into the cache key.
std::string contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return {};
  std::string text(static_cast<std::size_t>(std::max<std::streamoff>(0, in.tellg())), '\0');
  in.seekg(0);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(std::max<std::streamsize>(0, in.gcount())));
  return text;
}

// What the engines are compiled from besides their source and build.txt, for the cache key: the
// path and contents of every regular file under the `depends=` directories (the library's headers
// and the engine's own, in sorted order) and the contents of every `link=` file (the I/O library).
// A header or the library changed gives another key, so a stale executable is never reused. About
// 1 MB of files: a few ms (docs/benchmarks.md), and only when a cache directory is looked up.
const std::string& dependency_digest(const build_info& b) {
  if (!b.digest.empty()) return b.digest;
  std::uint64_t h = fnv1a("");
  auto mix = [&h](std::string_view s) {  // 8 bytes at a time (FNV-1a's byte loop takes 4 times longer)
    std::size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      h = (h ^ w) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 29;
    }
    for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(s[i])) * 1099511628211ull;
    h = (h ^ s.size()) * 1099511628211ull;  // (the length: "ab" + "c" is not "a" + "bc")
  };
  for (const std::string& dir : b.depends) {
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec)) files.push_back(it->path().string());
    std::sort(files.begin(), files.end());
    mix(dir);
    for (const std::string& f : files) {
      mix(f.substr(dir.size()));
      mix(contents(f));
    }
  }
  for (const std::string& l : b.links)
    if (std::error_code ec; fs::is_regular_file(l, ec)) mix(contents(l));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  b.digest = hex;
  return b.digest;
}

// The products of this build (the executables' flags are this program's) and this CPU, as
// `info` and `--version` print them.
void print_cpu(const char* indent) {
  char text[4096];
  sf::cpu::report(text, sizeof text, indent);
  std::fputs(text, stdout);
}

fs::path cache_root() {
  if (const char* d = std::getenv("STATICFORMER_CACHE"); d && *d) return d;
  if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return fs::path(d) / "staticformer";
  if (const char* d = std::getenv("HOME"); d && *d) return fs::path(d) / ".cache" / "staticformer";
  return fs::temp_directory_path() / "staticformer-cache";
}

// What arch.hpp holds: the architecture and the run settings, as C++.
std::string arch_header(const sf::arch& arch, const engine& e, const std::string& from) {
  std::string name = from;  // (a comment: one line)
  std::replace(name.begin(), name.end(), '\n', ' ');
  std::replace(name.begin(), name.end(), '\r', ' ');
  std::string literal;  // one line, for the #define
  for (const char c : sf_export::config_literal(arch))
    if (c != '\n' && !(c == ' ' && !literal.empty() && literal.back() == ' ')) literal += c;
  std::string h = "// Written by staticformer for " + name + ": " + sf::io::describe(arch) + "\n" +
                  "#define SF_ENGINE_ARCH (sf::arch" + literal + ")\n";
  if (e.kind == "train")
    h += "#define SF_ENGINE_BATCH " + std::to_string(e.batch) + "\n#define SF_ENGINE_PRECISION sf::precision_kind::" +
         sf::to_string(e.precision) + "\n";
  if (e.kind == "run" && e.streams > 1) h += "#define SF_ENGINE_STREAMS " + std::to_string(e.streams) + "\n";
  return h;
}

// Runs argv with stdout and stderr into `log`; the exit status (or -1).
int spawn_wait(const std::vector<std::string>& args, const std::string& log) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slug(const sf::arch& arch) {
  std::string s;
  for (const char c : sf::io::describe(arch)) {
    if (c == ' ') s += '-';
    else if (c != '=') s += c;
  }
  return s.size() > 80 ? s.substr(0, 80) : s;
}

struct located {
  std::string path;         // the executable
  std::string where;        // "compiled in advance (nano)", "cached", "not built yet"
  std::string dir;          // its cache directory (a built-on-first-use one)
  bool exists = false;
};

located locate(const sf::arch& arch, const engine& e, const build_info& b) {
  if (const sf::configs::named* k = known_shape(arch); k && !b.precompiled.empty()) {
    const bool settings_match =
        e.kind == "run" ? e.streams == 1 : e.batch == k->value.B && e.precision == k->value.precision;
    const fs::path p = fs::path(b.precompiled) / (std::string(k->name) + "-" + e.kind);
    if (settings_match && fs::exists(p)) return {p.string(), std::string("compiled in advance (") + k->name + ")", "", true};
  }
  std::string key = sf::io::describe(arch) + "|" + e.kind;
  if (e.kind == "train") key += "|B=" + std::to_string(e.batch) + "|" + sf::to_string(e.precision);
  if (e.kind == "run" && e.streams > 1) key += "|streams=" + std::to_string(e.streams);
  key += "|" + b.text + "|" + contents(e.kind == "run" ? b.source_run : b.source_train) + "|" + contents(b.source_check) +
         "|" + dependency_digest(b) + sf_engine::cpu_key(b.flags);  // (cpu_key.hpp)
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(key)));
  const fs::path dir = cache_root() / (slug(arch) + "-" + hex);
  const fs::path p = dir / (e.kind == "run" && e.streams > 1 ? "bench-decode" : e.kind);
  const bool exists = fs::exists(p);
  return {p.string(), exists ? "cached" : "not built yet", dir.string(), exists};
}

// Compiles the executable of (arch, e) into its cache directory.
std::string build(const sf::arch& arch, const engine& e, const build_info& b, const located& at,
                  const std::string& from) {
  std::error_code ec;
  fs::create_directories(at.dir, ec);
  if (ec) return "cannot create the cache directory " + at.dir + ": " + ec.message();
  const std::string header = (fs::path(at.dir) / "arch.hpp").string();
  {
    std::ofstream h(header);
    h << arch_header(arch, e, from);
    if (!h) return "cannot write " + header;
  }
  const std::string tmp = at.path + ".tmp." + std::to_string(::getpid());
  std::vector<std::string> cmd{b.cxx};
  cmd.insert(cmd.end(), b.flags.begin(), b.flags.end());
  for (const std::string& i : b.includes) cmd.push_back("-I" + i);
  cmd.insert(cmd.end(), {"-include", header, e.kind == "run" ? b.source_run : b.source_train});
  if (!b.source_check.empty()) cmd.push_back(b.source_check);  // the start-up CPU check (src/cpu_check.cpp)
  cmd.insert(cmd.end(), {"-o", tmp});
  cmd.insert(cmd.end(), b.links.begin(), b.links.end());
  std::string shown;
  for (const std::string& c : cmd) shown += (shown.empty() ? "" : " ") + c;
  {
    std::ofstream(fs::path(at.dir) / "command.txt") << shown << "\n";
  }
  std::fprintf(stderr,
               "staticformer: no executable for this architecture yet (%s; %s%s): compiling one with %s, once "
               "(about 20 s)...\n",
               sf::io::describe(arch).c_str(), e.kind.c_str(),
               e.kind == "train"  ? (", B " + std::to_string(e.batch) + " " + sf::to_string(e.precision)).c_str()
               : e.streams > 1    ? (" with " + std::to_string(e.streams) + " streams").c_str()
                                  : "",
               b.cxx.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  const std::string log = (fs::path(at.dir) / "build.log").string();
  const int rc = spawn_wait(cmd, log);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (rc != 0) {
    fs::remove(tmp, ec);
    const std::string text = contents(log);
    return "compiling failed (" + (rc < 0 ? std::string("could not run ") + b.cxx : "exit status " + std::to_string(rc)) +
           "): " + shown + "\n" + text.substr(text.size() > 4000 ? text.size() - 4000 : 0);
  }
  fs::rename(tmp, at.path, ec);
  if (ec) return "cannot move the executable into place: " + ec.message();
  std::fprintf(stderr, "staticformer: compiled in %.1f s: %s (later uses start at once)\n", s, at.path.c_str());
  return "";
}

// ---------------------------------------------------------------- the command line

// Options of each command that take a value (to find the model among the arguments).
bool takes_value(const std::string& command, const std::string& a, bool decode_bench = false) {
  if (decode_bench && (a == "--streams" || a == "--repeat")) return true;
  if (command == "run" || decode_bench)
    return (a.size() == 2 && a[0] == '-' && std::strchr("tpsnizmy", a[1])) || a == "--prompt" || a == "--temperature" ||
           a == "--top-p" || a == "--seed" || a == "--steps" || a == "--tokens" || a == "--top-k" || a == "--save-int8" ||
           a == "--sampler" || a == "--eval";
  if (command == "export" || command == "convert")
    return a == "-o" || a == "--output" || a == "--namespace" || a == "--llama2c" || a == "--tokenizer-out" ||
           a == "--group-size" || (command == "convert" && (a == "-z" || a == "--tokenizer"));
  if (command == "header") return a == "-o" || (a.size() > 2 && a[0] == '-' && a[1] == '-');
  return a.size() > 2 && a[0] == '-' && a[1] == '-' && a != "--int8";
}

// Version 2's group size when --group-size is not given: export.py's 64, halved (as export.py's
// "BACKOFF") until it divides both the width and the feed-forward width — runq.c's groups lie
// within a row, so both input widths must be multiples (stories260K's hidden 172: 4). Says so on
// stderr when it is not 64.
std::size_t default_group_size(const sf::arch& a) {
  std::size_t g = 64;
  while (g > 1 && (a.D % g != 0 || a.F % g != 0)) g /= 2;
  if (g != 64)
    std::fprintf(stderr, "staticformer convert: Q8_0 groups of %zu (the largest of 64, 32, ... that divides dim %zu and "
                         "hidden_dim %zu)\n", g, a.D, a.F);
  return g;
}

// The conversions that involve llama2.c's model files; nothing depends on the architecture here, so
// no executable is needed:
//   convert CHECKPOINT -o OUT.bin --llama2c VERSION [--tokenizer-out FILE] [--group-size G]
//       llama2.c's model file (sf::io::llama2c_from_checkpoint, write_llama2c), and the checkpoint's
//       BPE tokenizer as its tokenizer.bin;
//   convert MODEL.bin -o OUT.bin --llama2c VERSION [--group-size G]
//       a llama2.c file of any version as another (or the same) version: read_llama2c, write_llama2c.
//       Versions 0 and 1 hold the same float32 weights; a version-2 input keeps its own Q8_0 groups
//       when written as version 2 (its group size is the default, and another is refused: that
//       would quantize twice), and gives its dequantized weights as version 0 or 1;
//   convert MODEL.bin [-z TOKENIZER.bin] -o OUT.safetensors
//       the float checkpoint (save_llama2c_as_checkpoint), carrying the tokenizer.bin of -z as
//       metadata 'tokenizer.bpe' (what `train --tokenizer` stores).
// `llama2c_out` is whether --llama2c was given; the input's kind is found here.
int convert_llama2c(int argc, char** argv, bool llama2c_out) {
  std::string in, out, tokenizer_out, tokenizer_in;
  int version = -1;
  std::size_t group_size = 64;
  bool int8 = false, group_given = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("%s", usage("convert").c_str());
      return 0;
    } else if (a == "--int8") {
      int8 = true;
    } else if (a == "-o" || a == "--output" || a == "--llama2c" || a == "--tokenizer-out" || a == "--group-size" ||
               a == "-z" || a == "--tokenizer") {
      if (i + 1 >= argc) return fail_in("convert", a + " needs a value", 2);
      const std::string v = argv[++i];
      if (a == "--llama2c") {
        if (v != "0" && v != "1" && v != "2")
          return fail_in("convert", "--llama2c: '" + v + "' is not a version of llama2.c's model file (0, 1 or 2)", 2);
        version = v[0] - '0';
      } else if (a == "--group-size") {
        if (sf::status s = sf::io::parse_integer(std::string_view(v), group_size, std::size_t{1}, std::size_t{1} << 30); !s)
          return fail_in("convert", std::string("--group-size: ") + s.message(), 2);
        group_given = true;
      } else if (a == "-z" || a == "--tokenizer") {
        tokenizer_in = v;
      } else {
        (a == "--tokenizer-out" ? tokenizer_out : out) = v;
      }
    } else if (!a.empty() && a[0] == '-') {
      return fail_in("convert", "unknown option '" + a + "' (staticformer convert --help lists them)", 2);
    } else if (in.empty()) {
      in = a;
    } else {
      return fail_in("convert", "one model only ('" + a + "')", 2);
    }
  }
  if (in.empty() || out.empty())
    return fail_in("convert",
                   llama2c_out ? "usage: staticformer convert MODEL -o OUT.bin --llama2c VERSION [--tokenizer-out FILE]"
                               : "usage: staticformer convert MODEL.bin [-z TOKENIZER.bin] -o OUT.safetensors",
                   2);
  if (int8 && llama2c_out)
    return fail_in("convert", "--int8 and --llama2c: one conversion at a time (llama2.c's int8 file is --llama2c 2)", 2);
  if (group_given && version != 2) return fail_in("convert", "--group-size: only llama2.c's version 2 has groups", 2);

  sf::io::result<sf::io::file> f = sf::io::file::open(in);
  std::error_code ec;
  if (!f && sf::io::is_hf_directory(in)) {
    // A Hugging Face Llama directory: to a float checkpoint (rope_pairs halves), with its
    // tokenizer.model (or -z's tokenizer.bin)
    if (llama2c_out || int8 || !tokenizer_out.empty())
      return fail_in("convert", in + " is a Hugging Face directory: it converts to a float checkpoint (-o "
                                     "OUT.safetensors, without --llama2c, --int8 or --tokenizer-out), which then converts on",
                     2);
    sf::io::result<sf::io::hf_llama_model> m = sf::io::read_hf_llama(in);
    if (!m) return fail_in("convert", m.message());
    sf::io::metadata_map extra;
    std::string with = "no tokenizer: `staticformer run` and `export` need one (-z TOKENIZER.bin)";
    std::optional<sf::io::tokenizer_bin> tok = m->tokenizer;
    if (!tokenizer_in.empty()) {
      sf::io::result<sf::io::tokenizer_bin> t = sf::io::tokenizer_bin::open(tokenizer_in, sf::io::tokenizer_bin::until_end);
      if (!t) return fail_in("convert", "-z " + tokenizer_in + ": " + t.message());
      tok = std::move(*t);
    }
    if (tok) {
      sf::io::result<sf::io::metadata_map> meta = sf::io::tokenizer_metadata(*tok, m->arch.V);
      if (!meta) return fail_in("convert", (tokenizer_in.empty() ? in + "/" + m->tokenizer_file : "-z " + tokenizer_in) + ": " + meta.message());
      extra = std::move(*meta);
      with = "with the tokenizer " + (tokenizer_in.empty() ? in + "/" + m->tokenizer_file : tokenizer_in) + ", " +
             std::to_string(tok->size()) + " pieces";
    }
    sf::io::result<std::vector<std::byte>> bytes = sf::io::model_checkpoint_bytes(m->arch, m->tensors, extra);
    if (!bytes) return fail_in("convert", out + ": " + bytes.message());
    if (sf::status s = sf::io::detail::write_file_atomically(out, *bytes); !s) return fail_in("convert", out + ": " + s.message());
    std::fprintf(stderr, "staticformer convert: saved %s (a float checkpoint of the Hugging Face directory %s, %s "
                         "weights; %s; %s)\n", out.c_str(), in.c_str(), m->dtype.c_str(), sf::io::describe(m->arch).c_str(),
                 with.c_str());
    return 0;
  }
  if (!f && fs::is_regular_file(in, ec)) {
    // llama2.c's model file (versions 0, 1, 2)
    sf::io::result<sf::io::llama2c_model> m = sf::io::read_llama2c(in);
    if (!m)
      return fail_in("convert", neither(in, f.message(), m.message()));
    const std::string from = "llama2.c's version " + std::to_string(m->version) + " file";
    if (int8)
      return fail_in("convert", "--int8: " + in + " is " + from +
                                    "; convert it to a float checkpoint first (staticformer convert " + in +
                                    " -o M.safetensors), then that one with --int8; llama2.c's own int8 file is --llama2c 2",
                     2);
    if (!tokenizer_out.empty())
      return fail_in("convert", "--tokenizer-out: " + in + " is " + from +
                                    ", which holds no tokenizer (its tokenizer.bin is a file of its own)",
                     2);
    const std::string dequantized = m->version == 2 ? ", version 2's int8 weights dequantized" : "";
    if (llama2c_out) {
      if (!tokenizer_in.empty())
        return fail_in("convert", "-z: llama2.c's model file holds no tokenizer (-z goes with a checkpoint as output, "
                                  "without --llama2c)",
                       2);
      if (version == 2 && m->version == 2) {
        if (group_given && group_size != m->group_size)
          return fail_in("convert", "--group-size " + std::to_string(group_size) + ": " + in +
                                        " is a version-2 file of groups of " + std::to_string(m->group_size) +
                                        "; requantizing its int8 weights would quantize them twice: keep its groups "
                                        "(no --group-size) or quantize its float original",
                         2);
        group_size = m->group_size;  // its groups, copied as they are
      } else if (version == 2 && !group_given) {
        group_size = default_group_size(m->arch);
      }
      if (sf::status s = sf::io::write_llama2c(out, *m, {.version = version, .group_size = group_size}); !s)
        return fail_in("convert", out + ": " + s.message());
      const std::string how = version != 2 ? dequantized
                              : m->version == 2 ? ", its groups kept"
                                                : ", quantized as llama2.c's export.py does";
      std::fprintf(stderr, "staticformer convert: saved %s (llama2.c's version %d file, from %s%s; %s)\n", out.c_str(),
                   version, from.c_str(), how.c_str(), sf::io::describe(m->arch).c_str());
      return 0;
    }
    // The float checkpoint, with the tokenizer of -z.
    sf::io::metadata_map extra;
    std::string with = "no tokenizer: `staticformer run` and `export` need one (-z TOKENIZER.bin)";
    if (!tokenizer_in.empty()) {
      sf::io::result<sf::io::tokenizer_bin> t = sf::io::tokenizer_bin::open(tokenizer_in, sf::io::tokenizer_bin::until_end);
      if (!t) return fail_in("convert", "-z " + tokenizer_in + ": " + t.message());
      if (t->size() != m->arch.V)
        return fail_in("convert", "-z " + tokenizer_in + " has " + std::to_string(t->size()) + " pieces; " + in +
                                      "'s vocabulary is " + std::to_string(m->arch.V) + ": they must be equal");
      sf::io::result<sf::io::metadata_map> meta = sf::io::tokenizer_metadata(*t, m->arch.V);
      if (!meta) return fail_in("convert", "-z " + tokenizer_in + ": " + meta.message());
      extra = std::move(*meta);
      with = "with the tokenizer " + tokenizer_in + ", " + std::to_string(t->size()) + " pieces";
    }
    if (sf::status s = sf::io::save_llama2c_as_checkpoint(*m, out, extra); !s)
      return fail_in("convert", out + ": " + s.message());
    std::fprintf(stderr, "staticformer convert: saved %s (a float checkpoint of %s%s; %s; %s)\n", out.c_str(),
                 from.c_str(), dequantized.c_str(), sf::io::describe(m->arch).c_str(), with.c_str());
    return 0;
  }
  if (!f) return fail_in("convert", f.message());
  // A staticformer checkpoint: to llama2.c's file (without --llama2c the executable converts it).
  if (!tokenizer_in.empty())
    return fail_in("convert", "-z: " + in + " is a checkpoint, which carries its own tokenizer (-z goes with llama2.c's model file)", 2);
  if (!llama2c_out) return fail_in("convert", "usage: staticformer convert MODEL -o OUT --int8 | --llama2c VERSION", 2);
  if (sf::io::is_quantized(*f))
    return fail_in("convert", in + ": an int8 checkpoint; convert its float original (--llama2c 2 quantizes it as "
                                   "llama2.c's export.py does)");
  sf::io::result<sf::io::llama2c_model> m = sf::io::llama2c_from_checkpoint(*f);
  if (!m) return fail_in("convert", m.message());
  if (sf::io::result<sf::arch> c = sf::io::read_config(*f); c && c->rope_pairs == sf::rope_pairs_kind::halves)
    std::fprintf(stderr, "staticformer convert: %s: RoPE's halves pairs (Hugging Face's rotate_half) as llama2.c's adjacent "
                         "pairs: the columns of W_q and W_k permuted within each head\n", in.c_str());
  sf::io::result<sf::io::any_tokenizer> tok = sf::io::any_tokenizer{};
  if (!tokenizer_out.empty()) {
    if (!sf::io::has_tokenizer(f->metadata())) return fail_in("convert", sf_gen::no_tokenizer_message(in));
    tok = sf::io::read_tokenizer(f->metadata(), m->arch.V);
    if (!tok) return fail_in("convert", in + ": " + tok.message());
    if (!tok->bpe())
      return fail_in("convert", "--tokenizer-out: " + in +
                                    " carries a character tokenizer (metadata 'tokenizer.vocab'); llama2.c's "
                                    "tokenizer.bin holds a BPE one (staticformer train --tokenizer)");
  }
  if (version == 2 && !group_given) group_size = default_group_size(m->arch);
  if (sf::status s = sf::io::write_llama2c(out, *m, {.version = version, .group_size = group_size}); !s)
    return fail_in("convert", out + ": " + s.message());
  std::fprintf(stderr, "staticformer convert: saved %s (llama2.c's version %d file, %s)\n", out.c_str(), version,
               sf::io::describe(m->arch).c_str());
  if (!tokenizer_out.empty()) {
    if (sf::status s = tok->bpe()->save(tokenizer_out); !s) return fail_in("convert", tokenizer_out + ": " + s.message());
    std::fprintf(stderr, "staticformer convert: saved %s (its tokenizer.bin, %zu pieces)\n", tokenizer_out.c_str(),
                 tok->size());
  }
  return 0;
}

// Whether a file begins with GGUF's magic.
bool is_gguf(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  char m[4] = {};
  const bool yes = std::fread(m, 1, 4, f) == 4 && std::memcmp(m, "GGUF", 4) == 0;
  std::fclose(f);
  return yes;
}

// GGUF, in and out (sf::io::read_gguf, write_gguf):
//   convert MODEL.gguf [-z TOKENIZER.bin] -o OUT.safetensors
//       the float checkpoint, carrying the file's tokenizer (tokenizer.ggml.*, as llama2.c's
//       tokenizer.bin) as metadata 'tokenizer.bpe'; -z gives another one;
//   convert MODEL -o OUT.gguf --gguf f32|f16|q8_0 [-z TOKENIZER.bin]
//       MODEL a GGUF file (without --gguf, a Q8_0 one keeps its blocks as q8_0 and an F16 one its
//       values as f16; f16 writes the matrices float16, the norms float32), a float checkpoint (its BPE
//       tokenizer goes along) or llama2.c's model file (the tokenizer of -z goes along).
// convert MODEL -o DIR --hf [--dtype float32|float16|bfloat16] [--max-shard-size SIZE] [-z TOKENIZER.bin]:
// a Hugging Face Llama directory (sf::io::write_hf_llama) of a float checkpoint, llama2.c's model file, a
// GGUF file or another such directory, with the model's tokenizer (or -z's) as tokenizer.model and
// tokenizer.json; its tensors float32 unless --dtype (transformers' torch_dtype names) says otherwise,
// sharded as save_pretrained(max_shard_size=SIZE) shards them (default 10GB). Nothing is compiled.
int convert_hf(int argc, char** argv) {
  std::string in, out, tokenizer_in, type_name = "float32", shard_size = "10GB";
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--hf") continue;
    if (a == "-o" || a == "--output" || a == "-z" || a == "--tokenizer" || a == "--dtype" || a == "--max-shard-size") {
      if (i + 1 >= argc) return fail_in("convert", a + " needs a value", 2);
      (a == "-o" || a == "--output" ? out
       : a == "--dtype"             ? type_name
       : a == "--max-shard-size"    ? shard_size
                                    : tokenizer_in) = argv[++i];
    } else if (!a.empty() && a[0] == '-') {
      return fail_in("convert", "unknown option '" + a + "' with --hf (staticformer convert --help lists them)", 2);
    } else if (in.empty()) {
      in = a;
    } else {
      return fail_in("convert", "one model only ('" + a + "')", 2);
    }
  }
  if (in.empty() || out.empty())
    return fail_in("convert", "usage: staticformer convert MODEL -o DIR --hf [--dtype float32|float16|bfloat16] "
                              "[--max-shard-size SIZE] [-z TOKENIZER.bin]", 2);
  const std::optional<sf::io::dtype> type = sf::io::hf_dtype_named(type_name);
  if (!type) return fail_in("convert", "--dtype: '" + type_name + "' is not float32, float16 or bfloat16", 2);
  const std::optional<std::uint64_t> max_shard = sf::io::hf_shard_size(shard_size);
  if (!max_shard)
    return fail_in("convert", "--max-shard-size: '" + shard_size + "' is not a size: an integer (bytes), or one "
                   "followed by GB, MB, KB, GiB, MiB or KiB (transformers' max_shard_size)", 2);
  sf::arch arch;
  std::vector<sf::io::llama2c_tensor> tensors;
  std::optional<sf::io::tokenizer_bin> tok;
  std::string from;
  std::error_code ec;
  if (sf::io::is_hf_directory(in)) {
    sf::io::result<sf::io::hf_llama_model> m = sf::io::read_hf_llama(in);
    if (!m) return fail_in("convert", m.message());
    arch = m->arch, tensors = std::move(m->tensors), tok = std::move(m->tokenizer);
    from = "the Hugging Face directory " + in;
  } else if (is_gguf(in)) {
    sf::io::result<sf::io::gguf_model> m = sf::io::read_gguf(in);
    if (!m) return fail_in("convert", m.message());
    if (!m->tokens.empty() && tokenizer_in.empty()) {
      sf::io::result<sf::io::tokenizer_bin> t = sf::io::gguf_tokenizer(*m);
      if (!t) return fail_in("convert", in + ": " + t.message() + " (-z TOKENIZER.bin gives one)");
      tok = std::move(*t);
    }
    arch = m->arch, tensors = std::move(m->tensors);
    from = "GGUF" + std::string(m->quantized.empty() ? "" : ", its Q8_0 weights dequantized");
  } else if (sf::io::result<sf::io::file> f = sf::io::file::open(in); f) {
    if (sf::io::is_quantized(*f)) return fail_in("convert", in + ": an int8 checkpoint; convert its float original", 2);
    sf::io::result<sf::arch> a = sf::io::read_config(*f);
    if (!a) return fail_in("convert", in + ": " + a.message());
    sf::io::result<std::vector<sf::io::llama2c_tensor>> t = sf::io::read_checkpoint_tensors(*f, *a);
    if (!t) return fail_in("convert", t.message());
    arch = *a, tensors = std::move(*t);
    if (sf::io::has_tokenizer(f->metadata()) && tokenizer_in.empty()) {
      sf::io::result<sf::io::any_tokenizer> any = sf::io::read_tokenizer(f->metadata(), arch.V);
      if (!any) return fail_in("convert", in + ": " + any.message());
      if (!any->bpe()) return fail_in("convert", in + ": a character tokenizer; Hugging Face's Llama takes a BPE one (-z TOKENIZER.bin)", 2);
      tok = *any->bpe();
    }
    from = "a float checkpoint";
  } else if (fs::is_regular_file(in, ec)) {
    sf::io::result<sf::io::llama2c_model> m = sf::io::read_llama2c(in);
    if (!m)
      return fail_in("convert", in + ": neither a Hugging Face directory, a GGUF file, a staticformer checkpoint (" +
                                    f.message() + ") nor a llama2.c model file (" + m.message() + ")");
    arch = m->arch, tensors = std::move(m->tensors);
    from = "llama2.c's version " + std::to_string(m->version) + " file";
  } else {
    return fail_in("convert", f.message());
  }
  if (!tokenizer_in.empty()) {
    sf::io::result<sf::io::tokenizer_bin> t = sf::io::tokenizer_bin::open(tokenizer_in, arch.V);
    if (!t) return fail_in("convert", "-z " + tokenizer_in + ": " + t.message());
    tok = std::move(*t);
  }
  const bool permuted = arch.rope_pairs == sf::rope_pairs_kind::adjacent;
  if (sf::status s = sf::io::write_hf_llama(out, arch, std::move(tensors), tok ? &*tok : nullptr, *type, *max_shard); !s)
    return fail_in("convert", out + ": " + s.message());
  std::size_t shards = 0;  // (what the directory now holds)
  for (const auto& e : std::filesystem::directory_iterator(out, ec)) shards += sf::io::is_hf_shard_name(e.path().filename().string());
  const std::string weights = shards ? std::to_string(shards) + " shards and model.safetensors.index.json" : "model.safetensors";
  std::fprintf(stderr, "staticformer convert: saved %s (a Hugging Face Llama directory, %s in %s, from %s; %s%s; %s)\n",
               out.c_str(), type_name.c_str(), weights.c_str(), from.c_str(), sf::io::describe(arch).c_str(),
               permuted ? "; RoPE's adjacent pairs as Hugging Face's halves (rotate_half): q/k rows permuted" : "",
               tok ? ("with the tokenizer as tokenizer.model and tokenizer.json, " + std::to_string(tok->size()) + " pieces").c_str()
                   : "no tokenizer: give -z TOKENIZER.bin for tokenizer.model and tokenizer.json");
  return 0;
}

int convert_gguf(int argc, char** argv) {
  std::string in, out, tokenizer_in, type;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::printf("%s", usage("convert").c_str());
      return 0;
    } else if (a == "-o" || a == "--output" || a == "--gguf" || a == "-z" || a == "--tokenizer") {
      if (i + 1 >= argc) return fail_in("convert", a + " needs a value", 2);
      const std::string v = argv[++i];
      (a == "--gguf" ? type : a == "-z" || a == "--tokenizer" ? tokenizer_in : out) = v;
    } else if (!a.empty() && a[0] == '-') {
      return fail_in("convert", "unknown option '" + a + "' with GGUF (staticformer convert --help lists them)", 2);
    } else if (in.empty()) {
      in = a;
    } else {
      return fail_in("convert", "one model only ('" + a + "')", 2);
    }
  }
  if (in.empty() || out.empty())
    return fail_in("convert", "usage: staticformer convert MODEL.gguf -o OUT.safetensors | MODEL -o OUT.gguf --gguf f32|f16|q8_0", 2);
  if (type.empty() && std::string_view(out).ends_with(".gguf")) type = "f32";  // (a Q8_0 or F16 input: its type, below)
  const bool to_gguf = !type.empty();
  if (to_gguf && type != "f32" && type != "f16" && type != "q8_0")
    return fail_in("convert", "--gguf: '" + type + "' is not f32, f16 or q8_0", 2);
  sf::io::gguf_model m;
  std::string from;
  if (sf::io::is_hf_directory(in)) {  // (RoPE's halves pairs permuted to GGUF's adjacent ones)
    if (!to_gguf) return fail_in("convert", "--gguf f32|f16|q8_0: the output's type (" + in + " is a Hugging Face directory)", 2);
    sf::io::result<sf::io::hf_llama_model> h = sf::io::read_hf_llama(in);
    if (!h) return fail_in("convert", h.message());
    m.arch = h->arch;
    m.tensors = std::move(h->tensors);
    if (sf::status s = sf::io::convert_rope_pairs(m.arch, m.tensors, sf::rope_pairs_kind::adjacent); !s)
      return fail_in("convert", in + ": " + s.message());
    if (h->tokenizer) sf::io::gguf_set_tokenizer(m, *h->tokenizer);
    from = "the Hugging Face directory " + in + " (" + h->dtype + ")";
  } else if (is_gguf(in)) {
    sf::io::result<sf::io::gguf_model> g = sf::io::read_gguf(in);
    if (!g) return fail_in("convert", g.message());
    m = std::move(*g);
    const bool type_given = std::find(argv + 2, argv + argc, std::string_view("--gguf")) != argv + argc;
    if (to_gguf && !type_given && !m.quantized.empty()) type = "q8_0";  // its blocks, as they are
    else if (to_gguf && !type_given && !m.half.empty()) type = "f16";   // its float16 values, as they are
    from = "GGUF version " + std::to_string(m.version) +
           (m.quantized.empty() ? "" : to_gguf && type == "q8_0" ? ", its Q8_0 blocks kept" : ", its Q8_0 weights dequantized");
  } else {
    sf::io::result<sf::io::file> f = sf::io::file::open(in);
    std::error_code ec;
    if (f) {
      if (sf::io::is_quantized(*f)) return fail_in("convert", in + ": an int8 checkpoint; convert its float original", 2);
      sf::io::result<sf::io::gguf_model> g = sf::io::gguf_from_checkpoint(*f);
      if (!g) return fail_in("convert", g.message());
      m = std::move(*g);
      from = "a float checkpoint";
    } else if (fs::is_regular_file(in, ec)) {
      sf::io::result<sf::io::llama2c_model> l = sf::io::read_llama2c(in);
      if (!l)
        return fail_in("convert", in + ": neither a GGUF file, a staticformer checkpoint (" + f.message() +
                                      ") nor a llama2.c model file (" + l.message() + ")");
      m.arch = l->arch;
      for (sf::io::llama2c_tensor& t : l->tensors) m.tensors.push_back({std::move(t.name), std::move(t.shape), std::move(t.values)});
      from = "llama2.c's version " + std::to_string(l->version) + " file";
    } else {
      return fail_in("convert", f.message());
    }
    if (!to_gguf) return fail_in("convert", "--gguf f32|f16|q8_0: the output's type (" + in + " is not a GGUF file)", 2);
  }
  if (!tokenizer_in.empty()) {
    sf::io::result<sf::io::tokenizer_bin> t = sf::io::tokenizer_bin::open(tokenizer_in, sf::io::tokenizer_bin::until_end);
    if (!t) return fail_in("convert", "-z " + tokenizer_in + ": " + t.message());
    if (t->size() != m.arch.V)
      return fail_in("convert", "-z " + tokenizer_in + " has " + std::to_string(t->size()) + " pieces; " + in +
                                    "'s vocabulary is " + std::to_string(m.arch.V) + ": they must be equal");
    sf::io::gguf_set_tokenizer(m, *t);
  }
  std::string with = "no tokenizer";
  if (!m.tokens.empty()) with = "with its tokenizer, " + std::to_string(m.tokens.size()) + " pieces";
  if (to_gguf) {
    const auto t = type == "q8_0" ? sf::io::gguf_type::Q8_0 : type == "f16" ? sf::io::gguf_type::F16 : sf::io::gguf_type::F32;
    if (sf::status s = sf::io::write_gguf(out, m, {.type = t}); !s) return fail_in("convert", out + ": " + s.message());
    std::fprintf(stderr, "staticformer convert: saved %s (GGUF %s, from %s; %s; %s)\n", out.c_str(), type.c_str(),
                 from.c_str(), sf::io::describe(m.arch).c_str(), with.c_str());
    return 0;
  }
  sf::io::metadata_map extra;
  if (!m.tokens.empty()) {
    sf::io::result<sf::io::tokenizer_bin> t = sf::io::gguf_tokenizer(m);
    if (!t) return fail_in("convert", in + ": " + t.message() + " (-z TOKENIZER.bin gives one)");
    sf::io::result<sf::io::metadata_map> meta = sf::io::tokenizer_metadata(*t, m.arch.V);
    if (!meta) return fail_in("convert", in + ": " + meta.message());
    extra = std::move(*meta);
  } else {
    with = "no tokenizer: `staticformer run` and `export` need one (-z TOKENIZER.bin)";
  }
  sf::io::result<std::vector<std::byte>> bytes = sf::io::gguf_checkpoint_bytes(m, extra);
  if (!bytes) return fail_in("convert", in + ": " + bytes.message());
  if (sf::status s = sf::io::detail::write_file_atomically(out, *bytes); !s) return fail_in("convert", out + ": " + s.message());
  std::fprintf(stderr, "staticformer convert: saved %s (a float checkpoint of %s; %s; %s)\n", out.c_str(), from.c_str(),
               sf::io::describe(m.arch).c_str(), with.c_str());
  return 0;
}

// `staticformer --help` (command ""), or `staticformer COMMAND --help`.
int help(const std::string& command) {
  std::printf("%s", usage(command).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return std::fprintf(stderr, "%s", usage().c_str()), 2;
  const std::string command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") return help("");
  if (command == "--version") {  // the version, what this build's products run on, and this CPU
    build_info b;
    read_build_info(b);
    std::printf("staticformer %s\n", b.version.empty() ? "(version unknown: no build.txt)" : b.version.c_str());
    print_cpu("  ");
    return 0;
  }
  const bool known_command = command == "train" || command == "run" || command == "export" || command == "convert" ||
                             command == "info" || command == "bench" || command == "header";
  if (!known_command)
    return fail("unknown command '" + command + "'; the commands are train, run, export, convert, info, bench, header", 2);

  if (command == "convert") {
    for (int i = 2; i < argc; ++i)  // a Hugging Face directory out
      if (std::string_view(argv[i]) == "--hf") return convert_hf(argc, argv);
    for (int i = 2; i < argc; ++i) {  // GGUF in or out
      if (std::string_view(argv[i]) == "--gguf") return convert_gguf(argc, argv);
      const bool output = i > 2 && (std::string_view(argv[i - 1]) == "-o" || std::string_view(argv[i - 1]) == "--output");
      if (argv[i][0] != '-' && (output ? std::string_view(argv[i]).ends_with(".gguf") : is_gguf(argv[i])))
        return convert_gguf(argc, argv);
    }
    for (int i = 2; i < argc; ++i)
      if (std::string_view(argv[i]) == "--llama2c") return convert_llama2c(argc, argv, /*llama2c_out=*/true);
    for (int i = 2; i < argc; ++i)  // (-z: llama2.c's file to a checkpoint; refused for a checkpoint, there)
      if (std::string_view(argv[i]) == "-z" || std::string_view(argv[i]) == "--tokenizer")
        return convert_llama2c(argc, argv, /*llama2c_out=*/false);
  }

  // bench --decode: a model as `run` takes it, on an executable of run's kind with max(--streams) streams.
  bool decode_bench = false;
  if (command == "bench")
    for (int i = 2; i < argc; ++i) decode_bench = decode_bench || std::string_view(argv[i]) == "--decode";
  // `run` and `bench --decode`: the models `run` takes
  const bool runs = command == "run" || decode_bench;
  const bool reads_other_formats = runs || command == "info";  // Hugging Face, GGUF, llama2.c's files

  // The architecture, and the run settings that choose the executable.
  std::string model, config, output;
  engine e{(command == "train" || command == "bench") && !decode_bench ? "train" : "run"};
  if (decode_bench) e.streams = 16;  // (--streams' default 1,4,16)
  bool batch_given = false;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") return help(command);
    if (takes_value(command, a, decode_bench)) {
      if (i + 1 >= argc) return fail_in(command, a + " needs a value", 2);
      const std::string v = argv[++i];
      if (a == "--config") config = v;
      if (command == "header" && (a == "-o" || a == "--output")) output = v;
      if (decode_bench && a == "--streams") {  // the executable's streams: the largest count (the engine checks the list)
        e.streams = 1;
        for (std::size_t at = 0; at <= v.size();) {
          const std::size_t end = std::min(v.find(',', at), v.size());
          std::size_t n = 0;
          if (sf::status s = sf::io::parse_integer(std::string_view(v).substr(at, end - at), n, std::size_t{1},
                                                   std::size_t{256});
              !s)
            return fail_in(command, "--streams: '" + v + "' is not a list of counts in [1, 256]", 2);
          e.streams = std::max(e.streams, n);
          at = end + 1;
        }
        if (e.streams == 1) e.streams = 2;  // (one stream: still the bench's executable, not run's)
      }
      if (command == "header" && a == "--kind") {
        if (v != "run" && v != "train") return fail_in("header", "--kind: '" + v + "' is not run or train", 2);
        e.kind = v;
      }
      if (a == "--batch" && command != "run" && command != "export" && command != "convert") {
        if (sf::status s = sf::io::parse_integer(std::string_view(v), e.batch, std::size_t{1}, std::size_t{1} << 20); !s)
          return fail_in(command, std::string("--batch: ") + s.message(), 2);
        batch_given = true;
      }
      if (a == "--precision" && command != "run" && command != "export" && command != "convert") {
        const auto p = sf::parse<sf::precision_kind>(v);
        if (!p) return fail_in(command, "--precision: '" + v + "' is not f32 or bf16", 2);
        e.precision = *p;
      }
    } else if (!a.empty() && a[0] != '-' && model.empty()) {
      model = a;
    }
  }
  sf::arch arch;
  std::string from;
  bool int8 = false;
  std::size_t tensors = 0, parameters = 0, file_bytes = 0;
  bool has_tokenizer = false;
  sf::io::metadata_map metadata;
  std::string other_format;  // info of a file that is not a checkpoint: what it is
  // A file of which only the header was read here (run, bench --decode): how to read it whole, its
  // message when it is refused ("" when not), run before an executable is compiled for it.
  std::function<std::string()> check_whole_file;
  if (!config.empty()) {
    if (command != "train" && command != "bench" && command != "info" && command != "header")
      return fail_in(command, "takes a model, not --config", 2);
    sf::io::result<sf::arch> c = read_config_json(config);
    if (!c) return fail_in(command, c.message());
    arch = *c;
    from = config;
  } else if (!model.empty() && command != "train") {
    // A checkpoint: its header (the metadata: the architecture, the tokenizer) is what this program
    // needs, and the executable reads the values (`info` reads them all).
    sf::io::result<sf::io::file> f = command == "info" ? sf::io::file::open(model) : sf::io::file::open_header(model);
    std::error_code ec;
    if (!f && command == "convert" && (fs::is_regular_file(model, ec) || sf::io::is_hf_directory(model)))
      return convert_llama2c(argc, argv, /*llama2c_out=*/false);  // llama2.c's or Hugging Face's, to a checkpoint
    if (!f && reads_other_formats && sf::io::is_hf_directory(model)) {
      // a Hugging Face Llama directory: its config.json (the weights are read by the executable)
      sf::io::result<sf::arch> c = sf::io::read_hf_llama_config(model);
      if (!c) return fail_in(command, c.message());
      arch = *c;
      has_tokenizer = true;  // (its tokenizer.model, or -z FILE: the executable reads it)
      const bool sharded = !fs::exists(fs::path(model) / "model.safetensors", ec) &&
                           fs::exists(fs::path(model) / "model.safetensors.index.json", ec);
      const char* tokenizer = fs::exists(fs::path(model) / "tokenizer.model", ec)  ? " and tokenizer.model"
                              : fs::exists(fs::path(model) / "tokenizer.json", ec) ? " and tokenizer.json"
                                                                                  : "";
      other_format = std::string("a Hugging Face Llama directory (config.json read; ") +
                     (sharded ? "model.safetensors.index.json's shards" : "model.safetensors") + tokenizer +
                     " are read by run and convert)";
    } else if (!f && reads_other_formats && is_gguf(model)) {
      // a GGUF file: its tokenizer is its own (or -z FILE). `run` reads all but the values here,
      // as for llama2.c's files (the values when the executable is compiled first, below).
      sf::io::result<sf::io::gguf_model> m =
          command == "info" ? sf::io::read_gguf(model) : sf::io::read_gguf_header(model);
      if (!m) return fail_in(command, m.message());
      if (command != "info")
        check_whole_file = [&model] {
          const sf::io::result<sf::io::gguf_model> whole = sf::io::read_gguf(model);
          return whole ? std::string() : std::string(whole.message());
        };
      arch = m->arch;
      has_tokenizer = true;
      other_format = "GGUF version " + std::to_string(m->version) + ", " +
                     std::to_string(m->tensors.size()) + " tensors (" + std::to_string(m->quantized.size()) +
                     " of them Q8_0" + (m->half.empty() ? std::string() : ", " + std::to_string(m->half.size()) + " F16") + "), " +
                     (m->tokens.empty() ? std::string("no tokenizer") : std::to_string(m->tokens.size()) + " tokenizer pieces");
    } else if (!f && reads_other_formats && fs::is_regular_file(model, ec)) {
      // llama2.c's model file (versions 0, 1, 2): its tokenizer comes with -z. `run` reads its
      // header here (the size it implies checked against the file's); the values only when the
      // executable is compiled first (below: a bad file is refused before that), as the
      // executable reads them anyway. `info` reads them all.
      sf::io::result<sf::io::llama2c_model> m =
          command == "info" ? sf::io::read_llama2c(model) : sf::io::read_llama2c_header(model);
      if (!m) return fail_in(command, neither(model, f.message(), m.message()));
      if (command != "info")
        check_whole_file = [&model, not_checkpoint = std::string(f.message())] {
          const sf::io::result<sf::io::llama2c_model> whole = sf::io::read_llama2c(model);
          return whole ? std::string() : neither(model, not_checkpoint, whole.message());
        };
      arch = m->arch;
      has_tokenizer = true;  // (tokenizer.bin, or -z FILE: the executable reads it)
      other_format = "llama2.c's model file, version " + std::to_string(m->version) +
                     (m->version == 2 ? ", Q8_0 groups of " + std::to_string(m->group_size) : std::string()) +
                     " (its tokenizer.bin comes with -z)";
    } else {
      if (!f) return fail_in(command, f.message());
      sf::io::result<sf::arch> c = sf::io::read_config(*f);
      if (!c) return fail_in(command, model + ": not a staticformer checkpoint: " + c.message());
      arch = *c;
      int8 = sf::io::is_quantized(*f);
      tensors = f->tensors().size();
      for (const sf::io::tensor_info& t : f->tensors()) parameters += t.elements();
      file_bytes = f->size_bytes();
      metadata = f->metadata();
      has_tokenizer = sf::io::has_tokenizer(f->metadata());
    }
    from = model;
  } else if (command == "train") {
    return fail_in("train", "--config FILE.json is needed (the architecture to train)", 2);
  } else if (command == "bench" && !decode_bench) {
    arch = sf::configs::nano;  // the demo's shape, at its batch size
    from = "nano";
  } else {
    return fail_in(command, "no model given (staticformer " + command + " MODEL ...)", 2);
  }
  // A BPE tokenizer that does not fit the architecture is refused before anything is compiled.
  if (command == "train")
    for (int i = 2; i + 1 < argc; ++i)
      if (std::string_view(argv[i]) == "--tokenizer")
        if (sf::io::result<sf::io::tokenizer_bin> t = sf_engine::open_training_tokenizer(argv[i + 1], arch.V, config); !t)
          return fail_in("train", t.message());
  // A checkpoint that cannot be run or exported (no tokenizer) is refused before anything is compiled.
  if ((runs || command == "export" || command == "convert") && !has_tokenizer)
    return fail_in(command, sf_gen::no_tokenizer_message(model));
  if (!batch_given) {  // a known shape trains at its own batch size; others at 4
    const sf::configs::named* k = known_shape(arch);
    e.batch = k ? k->value.B : 4;
  }

  if (command == "header") {
    if (output.empty()) return fail_in("header", "-o FILE is needed", 2);
    std::ofstream h(output);
    h << arch_header(arch, e, from);
    h.close();
    if (!h) return fail_in("header", "cannot write " + output);
    return 0;
  }

  build_info b;
  if (std::string why = read_build_info(b); !why.empty()) return fail(why);

  if (command == "info") {
    const sf::configs::named* k = known_shape(arch);
    std::printf("%s\n  architecture: %s%s%s\n", from.c_str(), sf::io::describe(arch).c_str(), k ? ", the shape " : "",
                k ? k->name : "");
    if (!other_format.empty()) {
      std::printf("  file: %s\n", other_format.c_str());
    } else if (!model.empty() && config.empty()) {
      std::printf("  weights: %s, %zu tensors, %zu values, %zu bytes\n", int8 ? "int8 (Q8_0)" : "float32", tensors,
                  parameters, file_bytes);
      if (has_tokenizer) {
        const sf::io::result<sf::io::any_tokenizer> t = sf::io::read_tokenizer(metadata, arch.V);
        if (!t) std::printf("  tokenizer: refused: %s\n", t.message());
        else if (t->bpe()) std::printf("  tokenizer: BPE, %zu pieces (metadata tokenizer.bpe: llama2.c's tokenizer.bin)\n", t->size());
        else std::printf("  tokenizer: characters, %zu (metadata tokenizer.vocab)\n", t->size());
      }
      for (const auto& [key, value] : metadata)
        if (key.rfind("train.", 0) == 0) std::printf("  %s: %s\n", key.c_str(), value.c_str());
    }
    engine run{"run"}, train{"train", e.batch, e.precision};
    for (const engine* x : {&run, &train}) {
      const located at = locate(arch, *x, b);
      std::printf("  %s executable%s: %s%s%s\n", x->kind.c_str(),
                  x->kind == "train" ? (" (B " + std::to_string(x->batch) + ", " + sf::to_string(x->precision) + ")").c_str() : "",
                  at.where.c_str(), at.exists ? ", " : " (compiled on first use into ", at.exists ? at.path.c_str() : (at.dir + ")").c_str());
    }
    std::printf("  products of this build:\n");
    print_cpu("    ");
    return 0;
  }

  located at = locate(arch, e, b);
  if (!at.exists && check_whole_file)  // the whole file checked before anything is compiled
    if (const std::string why = check_whole_file(); !why.empty()) return fail_in(command, why);
  if (!at.exists)
    if (std::string why = build(arch, e, b, at, from); !why.empty()) return fail(why);
  std::vector<char*> args{const_cast<char*>(at.path.c_str())};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  std::fflush(nullptr);
  ::execv(at.path.c_str(), args.data());
  return fail("cannot run " + at.path + ": " + std::strerror(errno));
}
