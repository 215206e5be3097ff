// src/io/json_checked.hpp — staticformer::io's one JSON parse of untrusted text (private to src/io):
// nlohmann::json with the readers' limits. Used by the safetensors header (safetensors.cpp) and
// the Hugging Face files (hf_llama.cpp: model.safetensors.index.json, tokenizer.json).
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace sf::io::detail {

struct checked_json {
  nlohmann::json value;
  std::string invalid;     // nlohmann's message when the text is not JSON
  bool too_deep = false;   // nested deeper than max_depth (refused while parsing, before any deep value exists)
  // The first key named twice in one object (a JSON object would silently keep one): the key, the
  // depth of its object (1: the top level) and the top-level key it is under.
  bool duplicate = false;
  std::string duplicate_key, duplicate_top_key;
  int duplicate_depth = 0;
  bool ok() const { return invalid.empty() && !too_deep && !duplicate; }
};

checked_json parse_checked_json(std::string_view text, int max_depth);

}  // namespace sf::io::detail
