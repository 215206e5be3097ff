// staticformer/io/safetensors.hpp — checkpoints, batches and results as safetensors files.
//
// An optional header (the core umbrella header does not include it) of the compiled library
// staticformer::io (CMake: target_link_libraries(app PRIVATE staticformer::io); sources in
// src/io/). The library uses nlohmann::json and exceptions internally only: every function
// reports failure as an sf::status or an sf::io::result<T> carrying a readable message,
// never by throwing.
//
//   sf::params<C> p;                                       // C: a compiled sf::config
//   if (sf::status s = sf::io::load_params<C>("m.safetensors", p); !s) std::puts(s.message());
//   // "tensor 'blocks.0.attn.wq': expected shape [32, 32], found [32, 48]"
//
//   sf::io::writer w;                                      // results: any tensors + metadata
//   w.add("logits", logits).add("loss", sf::io::dtype::F32, {1}, &loss).add_all(grads, "grad.");
//   sf::status s = w.write("out.safetensors");             // path.tmp, then rename
//
// This header only includes its parts, one job each:
//
//   io/safetensors_format.hpp  the format: dtypes, result<T>, file (parse and validate, with
//                              every bounds check), writer, read_tensor, read_f64, tensor_slots
//   io/config_codec.hpp        sf::config <-> the checkpoint's __metadata__ strings:
//                              config_metadata, read_config, check_config, describe
//   io/params.hpp              parameters as docs/model.md checkpoints: save_params, load_params
//   io/batch.hpp               docs/model.md's batch file: load_batch
#pragma once
#include "staticformer/io/batch.hpp"
#include "staticformer/io/config_codec.hpp"
#include "staticformer/io/params.hpp"
#include "staticformer/io/quantized.hpp"
#include "staticformer/io/safetensors_format.hpp"
