// Part of the `train` example (examples/train.cpp): the training step of nano (sf::trainer:
// forward, backward and AdamW, float32 and bf16 products), compiled here once (explicit
// instantiations; train.cpp declares them `extern template`), so that each unit compiles quickly.
#include "staticformer/train.hpp"
#include "configs.hpp"

#define SF_TRAINER_INSTANTIATE(CFG) template struct sf::trainer<CFG>;
SF_TRAIN_CONFIGS(SF_TRAINER_INSTANTIATE)
