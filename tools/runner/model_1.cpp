// staticformer-run: sf_run::model for entry 1 of sf::configs::known (see tools/runner/model.cpp).
#include "model_impl.hpp"

template struct sf_run::model<sf::configs::known[1].value>;
