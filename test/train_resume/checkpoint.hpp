// test_train_resume: its configurations, and the checkpoint functions its tests call, as
// explicit instantiations: test/test_train_resume.cpp declares them `extern template` and
// calls them as usual; they are compiled once, in test/train_resume/save.cpp and load.cpp.
// The checkpoint code is large: so each of the three translation units stays quick to compile.
// (A test that calls one of them with another configuration of the same value, such as a
// local `one`, still uses these: class-type template arguments are compared by value.)
#ifndef SF_TEST_TRAIN_RESUME_CHECKPOINT_HPP
#define SF_TEST_TRAIN_RESUME_CHECKPOINT_HPP

#include <string>

#include "staticformer/data.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/tokenizer.hpp"
#include "staticformer/train.hpp"

namespace sf_test {
// The trained model.
inline constexpr sf::config cfg{{.V = 65, .T = 16, .D = 32, .H = 4, .L = 2, .F = 64}, {.B = 4}};
// The same weights, one sequence at a time (loading a model file as staticformer-run does).
inline constexpr sf::config cfg_one = [] { sf::config x = cfg; x.B = 1; return x; }();
// Another model shape (one block fewer): its optimizer state must not load from cfg's file.
inline constexpr sf::config cfg_other{{.V = 65, .T = 16, .D = 32, .H = 4, .L = 1, .F = 64}, {.B = 4}};
}  // namespace sf_test

// X is `extern template` (declarations, in the tests) or `template` (the definitions).
// Saving, compiled in test/train_resume/save.cpp:
#define SF_TRAIN_RESUME_SAVE_INSTANTIATIONS(X)                                                                         \
  X sf::status sf::io::save_training<sf_test::cfg>(const std::string&, const sf::trainer<sf_test::cfg>&,             \
                                                     const sf::dataset<sf_test::cfg>&, const sf::char_tokenizer&,    \
                                                     sf::io::metadata_map, const sf::io::metadata_map&);             \
  X sf::status sf::io::save_model<sf_test::cfg>(const std::string&, const sf::params<sf_test::cfg, float>&,          \
                                                  const sf::char_tokenizer&, sf::io::metadata_map);                  \
  X sf::status sf::io::save_optimizer<sf::params<sf_test::cfg>>(                                                     \
      const std::string&, const sf::adamw<sf::params<sf_test::cfg>>&, const sf::data_state&, std::size_t,           \
      std::size_t, const sf::io::metadata_map&);
// Loading, compiled in test/train_resume/load.cpp:
#define SF_TRAIN_RESUME_LOAD_INSTANTIATIONS(X)                                                                         \
  X sf::status sf::io::load_training<sf_test::cfg>(const std::string&, sf::trainer<sf_test::cfg>&,                   \
                                                     sf::dataset<sf_test::cfg>&, sf::char_tokenizer&,                \
                                                     sf::io::optimizer_info*);                                       \
  X sf::status sf::io::load_optimizer<sf::params<sf_test::cfg_other>>(                                               \
      const std::string&, sf::adamw<sf::params<sf_test::cfg_other>>&, sf::io::optimizer_info&);                     \
  X sf::status sf::io::load_params<sf_test::cfg_one, float>(const std::string&, sf::params<sf_test::cfg_one, float>&, \
                                                            const sf::io::load_options&);                              \
  X sf::status sf::io::load_model<sf_test::cfg_one>(const std::string&, sf::params<sf_test::cfg_one, float>&,        \
                                                      sf::char_tokenizer*, sf::io::metadata_map*,                     \
                                                      const sf::io::load_options&);

#endif  // SF_TEST_TRAIN_RESUME_CHECKPOINT_HPP
