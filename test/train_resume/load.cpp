// test_train_resume: the checkpoint functions that load, compiled here once (explicit
// instantiations; test/test_train_resume.cpp declares them `extern template`).
#include "checkpoint.hpp"

SF_TRAIN_RESUME_LOAD_INSTANTIATIONS(template)
