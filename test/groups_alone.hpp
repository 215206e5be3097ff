// test/groups_alone.hpp — a model read without its Q8_0 matrices' float values ({.dequantize =
// false}: read_llama2c, read_gguf) against the same file read whole: the same tensors by name and
// shape, the Q8_0 ones without values and every other with the same values, the same groups, and
// the same int8 checkpoint, byte for byte (int8_checkpoint_bytes: llama2c_int8_checkpoint_bytes or
// gguf_int8_checkpoint_bytes).
#pragma once
#include <gtest/gtest.h>

#include <cstddef>

namespace sf_test {

template <class Model, class Int8Bytes>
void expect_groups_alone(const Model& m, const Model& whole, Int8Bytes int8_checkpoint_bytes) {
  EXPECT_EQ(m.arch, whole.arch);
  ASSERT_EQ(m.tensors.size(), whole.tensors.size());
  std::size_t empty = 0;
  for (std::size_t k = 0; k < m.tensors.size(); ++k) {
    const auto &x = m.tensors[k], &y = whole.tensors[k];
    SCOPED_TRACE(y.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.shape, y.shape);
    if (whole.find_q8(y.name)) {  // a Q8_0 matrix: no values
      EXPECT_TRUE(x.values.empty());
      ++empty;
    } else {
      EXPECT_EQ(x.values, y.values);
    }
  }
  EXPECT_EQ(empty, whole.quantized.size());
  ASSERT_EQ(m.quantized.size(), whole.quantized.size());
  for (std::size_t k = 0; k < m.quantized.size(); ++k) {
    EXPECT_EQ(m.quantized[k].name, whole.quantized[k].name);
    EXPECT_EQ(m.quantized[k].rows, whole.quantized[k].rows);
    EXPECT_EQ(m.quantized[k].cols, whole.quantized[k].cols);
    EXPECT_EQ(m.quantized[k].q, whole.quantized[k].q);
    EXPECT_EQ(m.quantized[k].scales, whole.quantized[k].scales);
  }
  if (!whole.quantized.empty()) {
    auto a = int8_checkpoint_bytes(m), b = int8_checkpoint_bytes(whole);
    ASSERT_TRUE(a.is_ok()) << a.message();
    ASSERT_TRUE(b.is_ok()) << b.message();
    EXPECT_EQ(*a, *b);
  }
}

}  // namespace sf_test
