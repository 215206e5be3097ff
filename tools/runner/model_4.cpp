// staticformer-run: sf_run::model for entry 4 of sf::configs::known (see tools/runner/model.cpp).
#include "model_impl.hpp"

template struct sf_run::model<sf::configs::known[4].value>;
