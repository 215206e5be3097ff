// Part of the `train` example (examples/train.cpp): saving and restoring a training run of
// nano (float32 and bf16 products), compiled here once (explicit instantiations; train.cpp declares them `extern template`).
#include <string>

#include "staticformer/data.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/tokenizer.hpp"
#include "staticformer/train.hpp"
#include "configs.hpp"

#define SF_TRAIN_INSTANTIATE(CFG)                                                                              \
  template sf::status sf::io::save_training<CFG>(const std::string&, const sf::trainer<CFG>&,                  \
                                                 const sf::dataset<CFG>&, const sf::char_tokenizer&,           \
                                                 sf::io::metadata_map, const sf::io::metadata_map&);           \
  template sf::status sf::io::load_training<CFG>(const std::string&, sf::trainer<CFG>&, sf::dataset<CFG>&,     \
                                                 sf::char_tokenizer&, sf::io::optimizer_info*);
SF_TRAIN_CONFIGS(SF_TRAIN_INSTANTIATE)
