// (d) a head count that does not divide the model width: D = 64, H = 5, through sf::params<C>.
// first-error: (sf::config: D=64, H=5; the head count H must divide the model width D exactly|config<sf::shape_error::D<64>, sf::shape_error::H<5> ?>::ok. "sf::config: the head count H must divide the model width D exactly)
// expect: check_heads_divide_width(<64UL?, 5UL?>|\(\) \[with long unsigned int D = 64; long unsigned int H = 5\])
// expect: model_params<(sf::arch)?\{65, 64, 64, 5, 
// expect: config_heads_divide\.cpp:[0-9]+:[0-9]+: .*(required from here|model_params<)
#include "staticformer/params.hpp"

inline constexpr sf::arch my_model{.V = 65, .T = 64, .D = 64,
#ifdef SF_COMPILE_FAIL_CONTROL
                                   .H = 4,
#else
                                   .H = 5,
#endif
                                   .L = 2, .F = 256};

sf::params<my_model> weights;
