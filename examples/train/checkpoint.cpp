// Part of the `train` example (examples/train.cpp): saving and restoring a training run of
// nano, compiled here once (explicit instantiations; train.cpp declares them `extern template`).
#include <string>

#include "staticformer/data.hpp"
#include "staticformer/io/checkpoint.hpp"
#include "staticformer/model.hpp"
#include "staticformer/optim.hpp"
#include "staticformer/tokenizer.hpp"
#include "staticformer/train.hpp"

template sf::status sf::io::save_training<sf::configs::nano>(const std::string&, const sf::trainer<sf::configs::nano>&,
                                                             const sf::dataset<sf::configs::nano>&,
                                                             const sf::char_tokenizer&, sf::io::metadata_map,
                                                             const sf::io::metadata_map&);
template sf::status sf::io::load_training<sf::configs::nano>(const std::string&, sf::trainer<sf::configs::nano>&,
                                                             sf::dataset<sf::configs::nano>&, sf::char_tokenizer&,
                                                             sf::io::optimizer_info*);
