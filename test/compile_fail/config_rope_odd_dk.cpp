// (f) RoPE with an odd head width: D = 48, H = 16 gives d_k = 3, through sf::check_config<C>().
// first-error: (sf::config: D=48, H=16, dk=3; RoPE rotates pairs of the features of a head, so d_k = D / H must be even|config<sf::shape_error::D<48>, sf::shape_error::H<16>, sf::shape_error::dk<3> ?>::ok. "sf::config: RoPE rotates pairs of the features of a head, so d_k = D / H must be even)
// expect: check_rope_head_dim_even(<48UL?, 16UL?, 3UL?>|\(\) \[with long unsigned int D = 48; long unsigned int H = 16; long unsigned int dk = 3\])
// expect: config_rope_odd_dk\.cpp:[0-9]+:[0-9]+: .*(required from here|check_config<)
#include "staticformer/config.hpp"

inline constexpr sf::config llama_like{{.V = 96, .T = 24, .D = 48,
#ifdef SF_COMPILE_FAIL_CONTROL
                                        .H = 12,
#else
                                        .H = 16,
#endif
                                        .L = 3, .F = 96, .norm = sf::norm_kind::rmsnorm,
                                        .position = sf::position_kind::rope},
                                       {.B = 3}};

static_assert(sf::check_config<llama_like>());
