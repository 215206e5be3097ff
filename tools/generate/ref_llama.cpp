// staticformer-generate: the generation code for configuration sf_gen::ref_llama (one translation unit
// per configuration, to keep each quick to compile; see generate.hpp).
#include "run.hpp"

SF_GEN_INSTANTIATE(sf_gen::ref_llama)
