// staticformer/staticformer.hpp — the umbrella header of the core.
//
// The core needs only Boost.Hana and the C++20 standard library; it builds with
// -fno-exceptions -fno-rtti and never includes <iostream>. Optional headers,
// included separately: staticformer/fmt.hpp (printing with fmt),
// staticformer/io/*.hpp (files: safetensors checkpoints and batches) and
// staticformer/tokenizer.hpp (a character tokenizer with std::string).
#pragma once
#include "staticformer/axis.hpp"
#include "staticformer/config.hpp"
#include "staticformer/kernels/gemm.hpp"
#include "staticformer/data.hpp"
#include "staticformer/decode.hpp"
#include "staticformer/serve.hpp"
#include "staticformer/math.hpp"
#include "staticformer/init.hpp"
#include "staticformer/matmul.hpp"
#include "staticformer/memory.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/params.hpp"
#include "staticformer/reflect.hpp"
#include "staticformer/sampling.hpp"
#include "staticformer/simd.hpp"
#include "staticformer/status.hpp"
#include "staticformer/tensor.hpp"
#include "staticformer/train.hpp"
