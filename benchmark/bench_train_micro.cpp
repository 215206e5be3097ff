// sf_bench_train's rows at the micro shape (see bench_train.cpp; a unit of its own so that none
// takes long to compile).
#include "bench_train.hpp"

SF_BENCH_SHAPE(sf::configs::micro, "micro")
SF_BENCH_SHAPE_BF16(sf::configs::micro, "micro")
