// Training checkpoints: a run stopped, saved, loaded into fresh storage and resumed
// continues bit for bit like a run that never stopped; saves are crash-safe; mismatched
// files are refused; the model file is a docs/model.md checkpoint that decodes on its own.
// One GoogleTest program in three translation units, to keep each quick to compile: the
// checkpoint functions are compiled in test/train_resume/save.cpp and load.cpp (see
// test/train_resume/checkpoint.hpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "staticformer/data.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/tokenizer.hpp"
#include "staticformer/train.hpp"
#include "train_resume/checkpoint.hpp"

SF_TRAIN_RESUME_SAVE_INSTANTIATIONS(extern template)
SF_TRAIN_RESUME_LOAD_INSTANTIATIONS(extern template)

namespace {

constexpr sf::config cfg = sf_test::cfg;  // V 65, T 16, D 32, H 4, L 2, F 64, B 4
using trainer_t = sf::trainer<cfg>;
constexpr sf::lr_schedule schedule{.max_lr = 3e-3, .min_lr = 3e-4, .warmup_steps = 4, .total_steps = 60};
constexpr double clip = 1.0;
constexpr std::uint64_t seed = 1234;

struct corpus {
  std::string text;
  sf::char_tokenizer tok;
  std::vector<std::int32_t> ids;
};

const corpus& shakespeare() {
  static const corpus c = [] {
    corpus r;
    std::ifstream in(SF_SOURCE_DIR "/data/tinyshakespeare.txt", std::ios::binary);
    r.text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    r.text.resize(std::min<std::size_t>(r.text.size(), 40000));
    r.tok = sf::char_tokenizer::from_corpus(r.text);
    (void)r.tok.encode(r.text, r.ids);
    return r;
  }();
  return c;
}

std::unique_ptr<trainer_t> fresh() {
  auto t = std::make_unique<trainer_t>();
  sf::init_params(t->p, seed);
  t->opt.options = {.weight_decay = 0.1, .decay = sf::decay_on::matrices};
  return t;
}

template <class S>
bool bit_equal(const S& a, const S& b) {
  bool same = true;
  sf::visit([&](const sf::param_name&, const auto& x, const auto& y) {
    same = same && std::memcmp(x.data(), y.data(), sizeof(x.data()[0]) * x.size) == 0;
  }, a, b);
  return same;
}

struct temp_dir {
  std::filesystem::path path;
  explicit temp_dir(const char* name)
      : path(std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
  }
  ~temp_dir() { std::filesystem::remove_all(path); }
  std::string str() const { return path.string(); }
};

}  // namespace

TEST(TrainResume, ResumedRunIsBitIdenticalToContinuousRun) {
  const corpus& c = shakespeare();
  ASSERT_EQ(c.ids.size(), c.text.size());
  constexpr int total = 14, stop = 6;

  // The run that never stops.
  auto a = fresh();
  sf::dataset<cfg> da(c.ids, 0.1, seed);
  ASSERT_TRUE(da.ok());
  std::vector<float> losses_a;
  for (int i = 0; i < total; ++i) losses_a.push_back(a->step(da, schedule, clip).loss);

  // The run that stops after `stop` steps and is saved.
  temp_dir dir("sf-resume");
  {
    auto b = fresh();
    sf::dataset<cfg> db(c.ids, 0.1, seed);
    for (int i = 0; i < stop; ++i) ASSERT_EQ(b->step(db, schedule, clip).loss, losses_a[i]) << i;
    ASSERT_TRUE(sf::io::save_training<cfg>(dir.str(), *b, db, c.tok, {}, {{"note", "resume test"}}));
  }

  // A new process, in effect: fresh storage (zero moments, other parameters), a dataset
  // with another seed; everything must come from the files.
  auto r = std::make_unique<trainer_t>();
  sf::init_params(r->p, 999);
  sf::dataset<cfg> dr(c.ids, 0.1, 4321);
  sf::char_tokenizer tok;
  sf::io::optimizer_info info;
  const sf::status s = sf::io::load_training<cfg>(dir.str(), *r, dr, tok, &info);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(r->steps(), stop);
  EXPECT_TRUE(tok == c.tok);
  EXPECT_EQ(info.metadata.at("note"), "resume test");
  EXPECT_EQ(r->opt.options.weight_decay, 0.1);
  EXPECT_EQ(r->opt.options.decay, sf::decay_on::matrices);
  EXPECT_EQ(dr.batches_drawn(), static_cast<std::uint64_t>(stop));

  for (int i = stop; i < total; ++i) {
    const float loss = r->step(dr, schedule, clip).loss;
    EXPECT_EQ(std::memcmp(&loss, &losses_a[i], sizeof loss), 0) << "step " << i << ": " << loss << " vs " << losses_a[i];
  }
  EXPECT_TRUE(bit_equal(r->p, a->p)) << "parameters differ after resuming";
  EXPECT_TRUE(bit_equal(r->opt.m, a->opt.m));
  EXPECT_TRUE(bit_equal(r->opt.v, a->opt.v));
  EXPECT_EQ(r->opt.t, a->opt.t);
  EXPECT_TRUE(dr.save_state() == da.save_state());
  const double va = a->evaluate(da, 4), vr = r->evaluate(dr, 4);
  EXPECT_EQ(std::memcmp(&va, &vr, sizeof va), 0);
}

TEST(TrainResume, LossFalls) {
  // 150 steps of 4 × 16 tokens: from uniform guessing (ln 65 = 4.17 nats) to below the
  // unigram entropy of this text (3.28 nats), which only using the context can reach.
  const corpus& c = shakespeare();
  auto t = fresh();
  sf::dataset<cfg> d(c.ids, 0.1, seed);
  constexpr sf::lr_schedule s{.max_lr = 1e-2, .min_lr = 1e-3, .warmup_steps = 10, .total_steps = 150};
  const double val0 = t->evaluate(d);
  double first = 0, last = 0;
  for (int i = 0; i < 150; ++i) {
    const float loss = t->step(d, s, clip).loss;
    ASSERT_TRUE(std::isfinite(loss));
    if (i < 10) first += loss / 10;
    if (i >= 140) last += loss / 10;
  }
  const double val1 = t->evaluate(d);
  std::printf("train loss %.3f -> %.3f, val loss %.3f -> %.3f\n", first, last, val0, val1);
  EXPECT_NEAR(val0, std::log(65.0), 0.1);  // near-uniform predictions at initialisation
  EXPECT_LT(last, first - 0.4);
  EXPECT_LT(val1, val0 - 0.8);
  EXPECT_LT(val1, 3.25);
}

TEST(TrainResume, SavesAreCrashSafe) {
  const corpus& c = shakespeare();
  temp_dir dir("sf-crash");
  auto t = fresh();
  sf::dataset<cfg> d(c.ids, 0.1, seed);
  for (int i = 0; i < 3; ++i) t->step(d, schedule, clip);
  ASSERT_TRUE(sf::io::save_training<cfg>(dir.str(), *t, d, c.tok));
  EXPECT_TRUE(std::filesystem::exists(dir.path / "optimizer-00000003.safetensors"));
  for (int i = 0; i < 2; ++i) t->step(d, schedule, clip);
  ASSERT_TRUE(sf::io::save_training<cfg>(dir.str(), *t, d, c.tok));
  EXPECT_TRUE(std::filesystem::exists(dir.path / "optimizer-00000005.safetensors"));
  EXPECT_FALSE(std::filesystem::exists(dir.path / "optimizer-00000003.safetensors"));  // the old pair is gone
  static sf::params<cfg> saved_p;
  saved_p = t->p;

  // A crash during the next save: the new optimizer file is complete but the model
  // file was not renamed yet (only a partial temporary exists).
  t->step(d, schedule, clip);
  ASSERT_TRUE(sf::io::save_optimizer(sf::io::detail::join(dir.str(), sf::io::detail::step_name(t->steps())), t->opt,
                                     d.save_state(), d.train_size(), d.val_size()));
  { std::ofstream((dir.path / "model.safetensors.tmp").string(), std::ios::binary) << "partial garbage"; }

  auto r = std::make_unique<trainer_t>();
  sf::dataset<cfg> dr(c.ids, 0.1, seed);
  sf::char_tokenizer tok;
  const sf::status s = sf::io::load_training<cfg>(dir.str(), *r, dr, tok);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(r->steps(), 5);  // the previous checkpoint, intact
  EXPECT_TRUE(bit_equal(r->p, saved_p));
}

TEST(TrainResume, MismatchesAreRefused) {
  const corpus& c = shakespeare();
  temp_dir dir("sf-mismatch");
  auto t = fresh();
  sf::dataset<cfg> d(c.ids, 0.1, seed);
  t->step(d, schedule, clip);
  ASSERT_TRUE(sf::io::save_training<cfg>(dir.str(), *t, d, c.tok));

  auto r = std::make_unique<trainer_t>();
  sf::char_tokenizer tok;
  {  // another corpus size
    const std::vector<std::int32_t> shorter(c.ids.begin(), c.ids.end() - 100);
    sf::dataset<cfg> other(shorter, 0.1, seed);
    const sf::status s = sf::io::load_training<cfg>(dir.str(), *r, other, tok);
    ASSERT_FALSE(s);
    EXPECT_NE(std::string(s.message()).find("tokens"), std::string::npos) << s.message();
  }
  {  // a model file that names an optimizer file of another step
    ASSERT_TRUE(sf::io::save_model<cfg>(sf::io::detail::join(dir.str(), "model.safetensors"), t->p, c.tok,
                                        {{"train.step", "7"}, {"train.optimizer", "optimizer-00000001.safetensors"}}));
    const sf::status s = sf::io::load_training<cfg>(dir.str(), *r, d, tok);
    ASSERT_FALSE(s);
    EXPECT_NE(std::string(s.message()).find("step 7"), std::string::npos) << s.message();
  }
  {  // a plain model checkpoint cannot be resumed
    ASSERT_TRUE(sf::io::save_model<cfg>(sf::io::detail::join(dir.str(), "model.safetensors"), t->p, c.tok));
    const sf::status s = sf::io::load_training<cfg>(dir.str(), *r, d, tok);
    ASSERT_FALSE(s);
    EXPECT_NE(std::string(s.message()).find("no optimizer state"), std::string::npos) << s.message();
  }
  {  // an optimizer file of another model shape
    constexpr sf::config other{{.V = 65, .T = 16, .D = 32, .H = 4, .L = 1, .F = 64}, {.B = 4}};
    static sf::adamw_state<sf::params<other>> o;
    sf::io::optimizer_info info;
    const sf::status s =
        sf::io::load_optimizer(sf::io::detail::join(dir.str(), "optimizer-00000001.safetensors"), o, info);
    ASSERT_FALSE(s);
    EXPECT_NE(std::string(s.message()).find("expected 40 tensors"), std::string::npos) << s.message();
  }
}

TEST(TrainResume, ModelFileIsASpecCheckpointThatDecodesOnItsOwn) {
  const corpus& c = shakespeare();
  temp_dir dir("sf-model");
  auto t = fresh();
  sf::dataset<cfg> d(c.ids, 0.1, seed);
  t->step(d, schedule, clip);
  ASSERT_TRUE(sf::io::save_training<cfg>(dir.str(), *t, d, c.tok));
  const std::string path = sf::io::detail::join(dir.str(), "model.safetensors");

  // Plain docs/model.md loading (as staticformer-run does) with a batch size of 1.
  constexpr sf::config one = [] { sf::config x = cfg; x.B = 1; return x; }();
  static sf::params<one> p;
  ASSERT_TRUE(sf::io::load_params<one>(path, p));
  EXPECT_TRUE(bit_equal(p, t->p));
  // With its tokenizer.
  sf::char_tokenizer tok;
  sf::io::metadata_map meta;
  ASSERT_TRUE(sf::io::load_model<one>(path, p, &tok, &meta));
  EXPECT_TRUE(tok == c.tok);
  EXPECT_EQ(meta.at("format"), "staticformer");
  EXPECT_EQ(meta.at("train.step"), "1");
  std::vector<std::int32_t> ids;
  ASSERT_TRUE(tok.encode("ROMEO:", ids));
  EXPECT_EQ(tok.decode(ids), "ROMEO:");
}

// ----------------------------------------------------------------------------- hostile input (issue #12)

// A run's settings read back from its optimizer file are parsed strictly and range-checked, by
// the rules the command line of examples/train uses (sf::io::training_settings).
TEST(TrainResume, SettingsAreParsedStrictly) {
  sf::io::training_settings run;
  run.total_steps = 24;
  run.lr = 4e-3;
  run.eval_every = 2;
  run.seed = 18446744073709551615u;
  run.seconds = 12.5;
  const sf::io::metadata_map good = run.to_metadata();
  EXPECT_EQ(good.at("train.total_steps"), "24");
  EXPECT_EQ(good.at("train.lr"), "0.004");
  EXPECT_EQ(good.at("train.seed"), "18446744073709551615");
  sf::io::training_settings back;
  ASSERT_TRUE(back.from_metadata(good));
  EXPECT_EQ(back.to_metadata(), good);
  EXPECT_EQ(back.seed, run.seed);

  struct bad_value {
    const char* key;
    const char* value;
    const char* message;
  };
  static const bad_value cases[] = {
      {"train.total_steps", "nan", "metadata 'train.total_steps': expected an integer from 1 to 1000000000000, found \"nan\""},
      {"train.total_steps", "1e300", "metadata 'train.total_steps': expected an integer from 1 to 1000000000000, found \"1e300\""},
      {"train.total_steps", "-5", "metadata 'train.total_steps': expected an integer from 1 to 1000000000000, found \"-5\""},
      {"train.total_steps", "0", "metadata 'train.total_steps': expected an integer from 1 to 1000000000000, found \"0\""},
      {"train.eval_batches", "-1", "metadata 'train.eval_batches': expected an integer from 0 to 1000000000, found \"-1\""},
      {"train.eval_every", "2.5", "metadata 'train.eval_every': expected an integer from 0 to 1000000000000, found \"2.5\""},
      {"train.lr", "fast", "metadata 'train.lr': expected a number > 0, found \"fast\""},
      {"train.lr", "nan", "metadata 'train.lr': expected a number > 0, found \"nan\""},
      {"train.lr", "0", "metadata 'train.lr': expected a number > 0, found \"0\""},
      {"train.min_lr_ratio", "1.5", "metadata 'train.min_lr_ratio': expected a number from 0 to 1, found \"1.5\""},
      {"train.warmup", "1", "metadata 'train.warmup': expected a number >= 0 and < 1, found \"1\""},
      {"train.clip", "-1", "metadata 'train.clip': expected a number >= 0, found \"-1\""},
      {"train.seed", "-1", "metadata 'train.seed': expected an integer from 0 to 18446744073709551615, found \"-1\""},
      {"train.seconds", "inf", "metadata 'train.seconds': expected a number >= 0, found \"inf\""},
      {"train.cpu_seconds", " 1", "metadata 'train.cpu_seconds': expected a number >= 0, found \" 1\""},
  };
  for (const bad_value& c : cases) {
    sf::io::metadata_map m = good;
    m[c.key] = c.value;
    sf::io::training_settings t = back;
    EXPECT_STREQ(t.from_metadata(m).message(), c.message);
    EXPECT_EQ(t.to_metadata(), good) << "changed by a refused " << c.key;  // nothing changes on error
  }
  sf::io::metadata_map missing = good;
  missing.erase("train.clip");
  EXPECT_STREQ(back.from_metadata(missing).message(), "missing metadata 'train.clip'");

  // The command line's values, by the same rules (examples/train: --steps, --lr, ...).
  sf::io::training_settings cli;
  EXPECT_STREQ(cli.set("total_steps", "0").message(), "expected an integer from 1 to 1000000000000, found \"0\"");
  EXPECT_STREQ(cli.set("lr", "nan").message(), "expected a number > 0, found \"nan\"");
  EXPECT_STREQ(cli.set("no_such", "1").message(), "no training setting 'no_such'");
  ASSERT_TRUE(cli.set("total_steps", "300"));
  ASSERT_TRUE(cli.set("clip", "0"));  // 0: no clipping
  EXPECT_EQ(cli.total_steps, 300);
  EXPECT_EQ(cli.clip, 0.0);
}

// What load_training reads is checked too: the optimizer's hyper-parameters (finite, in
// range), its moments (finite; v not negative) and the model's weights (finite).
TEST(TrainResume, NonFiniteStateIsRefused) {
  const corpus& c = shakespeare();
  sf::dataset<cfg> d(c.ids, 0.1, seed);
  auto t = fresh();
  t->step(d, schedule, clip);
  auto r = std::make_unique<trainer_t>();
  sf::char_tokenizer tok;
  auto refusal = [&](const trainer_t& saved, const char* name) {
    temp_dir dir(name);
    EXPECT_TRUE(sf::io::save_training<cfg>(dir.str(), saved, d, c.tok));
    sf::dataset<cfg> dr(c.ids, 0.1, seed);
    const sf::status s = sf::io::load_training<cfg>(dir.str(), *r, dr, tok);
    const std::string m = s.message();
    const std::size_t at = m.find("': ");  // after the file name
    return s ? std::string("(loaded)") : at == std::string::npos ? m : m.substr(at + 3);
  };
  auto u = std::make_unique<trainer_t>(*t);
  u->opt.options.beta2 = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(refusal(*u, "sf-beta2"), "metadata 'beta2': expected a number >= 0 and < 1, found \"nan\"");
  *u = *t;
  u->opt.options.eps = 0;
  EXPECT_EQ(refusal(*u, "sf-eps"), "metadata 'eps': expected a number > 0, found \"0\"");
  *u = *t;
  u->opt.m.blocks[1].ffn.w2(3, 4) = std::numeric_limits<float>::infinity();
  EXPECT_EQ(refusal(*u, "sf-m"),
            "tensor 'm.blocks.1.ffn.w2': element [3, 4] is inf (optimizer moments must be finite)");
  *u = *t;
  u->opt.v.tok_emb.weight(2, 5) = -1.0f;
  EXPECT_EQ(refusal(*u, "sf-v"), "tensor 'v.tok_emb.weight': element [2, 5] is -1 (v holds squares: never negative)");
  *u = *t;
  u->p.pos_emb.weight(7, 0) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(refusal(*u, "sf-p"), "tensor 'pos_emb.weight': element [7, 0] is nan (weights must be finite)");
  EXPECT_EQ(refusal(*t, "sf-ok"), "(loaded)");
}
