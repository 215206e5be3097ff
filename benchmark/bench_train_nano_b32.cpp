// sf_bench_train's rows at nano with B = 32 (see bench_train.cpp; a unit of its own so that none
// takes long to compile).
#include "bench_train.hpp"

SF_BENCH_SHAPE(sf_bench_train::nano_b32, "nano_b32")
