// Part of the `train` example: the configurations it trains — nano with float32 products, and
// nano with bf16 products (--precision bf16; the same weights and files). X(config) for each: the
// translation units that compile code per configuration (train.cpp's extern declarations,
// checkpoint.cpp's instantiations, decode.cpp's) list them from here.
#pragma once
#include "staticformer/config.hpp"

#define SF_TRAIN_CONFIGS(X) X(sf::configs::nano) X(sf::configs::nano.with(sf::precision_kind::bf16))
