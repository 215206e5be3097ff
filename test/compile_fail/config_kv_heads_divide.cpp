// (g) grouped-query attention whose key/value heads do not divide the heads: H = 6, kv_heads = 4,
// through sf::params<C>.
// first-error: (sf::config: H=6, kv_heads=4; the key/value heads kv_heads must divide the heads H|config<sf::shape_error::H<6>, sf::shape_error::kv_heads<4> ?>::ok. "sf::config: the key/value heads kv_heads must divide the heads H)
// expect: check_kv_heads_divide_heads(<6UL?, 4UL?>|\(\) \[with long unsigned int H = 6; long unsigned int KV = 4\])
// expect: config_kv_heads_divide\.cpp:[0-9]+:[0-9]+: .*(required from here|model_params<)
#include "staticformer/params.hpp"

inline constexpr sf::arch llama_like{.V = 64, .T = 16, .D = 48, .H = 6,
#ifdef SF_COMPILE_FAIL_CONTROL
                                     .kv_heads = 3,
#else
                                     .kv_heads = 4,
#endif
                                     .L = 1, .F = 96, .norm = sf::norm_kind::rmsnorm, .position = sf::position_kind::rope};

sf::params<llama_like> weights;
