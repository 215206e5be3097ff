# Configures the project without its tests; installs staticformer into a prefix, then configures and builds a tiny consumer
# project that uses find_package(staticformer): the core (staticformer::staticformer) in a
# constant expression and the compiled file I/O (staticformer::io) saving and loading a
# checkpoint; runs it. The library is built with warnings as errors and -march=native, which
# must stay the project's own: the installed targets file may mention none of -march, -Werror,
# -fsanitize or nlohmann (a private, build-only dependency of staticformer::io).
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/src)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
# The programs without the test suite (the default options but STATICFORMER_BUILD_TESTS=OFF),
# configured only: tools/, examples/ and benchmark/ may not need what test/ defines (a
# benchmark's PyTorch check once called the tests' sf_add_pytorch_test, and this configure failed).
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/no-tests -DCMAKE_CXX_COMPILER=${CXX} -DSTATICFORMER_BUILD_TESTS=OFF)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/lib-build -DCMAKE_CXX_COMPILER=${CXX}
    -DSTATICFORMER_BUILD_TESTS=OFF -DSTATICFORMER_BUILD_EXAMPLES=OFF -DSTATICFORMER_BUILD_BENCHMARKS=OFF
    -DSTATICFORMER_BUILD_TOOLS=OFF
    -DSTATICFORMER_WERROR=ON -DSTATICFORMER_NATIVE=ON -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/lib-build)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/lib-build)
file(GLOB_RECURSE targets_files ${WORK_DIR}/prefix/*/staticformerTargets*.cmake)
if(NOT targets_files)
  message(FATAL_ERROR "no staticformerTargets*.cmake installed under ${WORK_DIR}/prefix")
endif()
foreach(f IN LISTS targets_files)
  file(READ ${f} text)
  foreach(word -march -Werror -fsanitize nlohmann sf_project_flags)
    string(FIND "${text}" "${word}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "the installed ${f} mentions ${word}: a flag or dependency of the project's own build "
                          "reaches consumers")
    endif()
  endforeach()
  if(f MATCHES "staticformerTargets.cmake$" AND NOT text MATCHES "staticformer::io")
    message(FATAL_ERROR "the installed ${f} does not define staticformer::io")
  endif()
endforeach()
file(WRITE ${WORK_DIR}/src/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.20)
project(consumer LANGUAGES CXX)
find_package(staticformer 0.1 REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE staticformer::io)   # brings staticformer::staticformer
]=])
file(WRITE ${WORK_DIR}/src/main.cpp [=[
#include <staticformer/staticformer.hpp>
constexpr float f() {
  sf::tensor<float, sf::Seq<2>, sf::Model<3>> x{};
  sf::tensor<float, sf::Model<3>, sf::Ffn<2>> w{};
  sf::tensor<float, sf::Seq<2>, sf::Ffn<2>> y{};
  x.fill(1.0f); w.fill(2.0f);
  sf::matmul(y, x, w);
  return y(1, 1);
}
static_assert(f() == 6.0f);

#include <staticformer/io/safetensors.hpp>
#include <cstdio>
inline constexpr sf::arch tiny{.V = 5, .T = 4, .D = 8, .H = 2, .L = 1, .F = 16};
static sf::params<tiny> p, q;
int main() {
  if (f() != 6.0f) return 1;
  sf::init_params(p, 1);
  if (sf::status s = sf::io::save_params<tiny>("consumer.safetensors", p); !s) return std::puts(s.message()), 1;
  if (sf::status s = sf::io::load_params<tiny>("consumer.safetensors", q); !s) return std::puts(s.message()), 1;
  bool same = true;
  sf::visit([&](const sf::param_name&, const auto& a, const auto& b) {
    for (std::size_t i = 0; i < a.size; ++i) same = same && a[i] == b[i];
  }, p, q);
  auto file = sf::io::file::open("consumer.safetensors");
  if (!file || !sf::io::check_config(*file, tiny)) return 1;
  std::printf("%zu tensors saved and loaded back %s\n", file->tensors().size(), same ? "identical" : "DIFFERENT");
  return same ? 0 : 1;
}
]=])
run(${CMAKE_COMMAND} -S ${WORK_DIR}/src -B ${WORK_DIR}/build -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
execute_process(COMMAND ${WORK_DIR}/build/consumer WORKING_DIRECTORY ${WORK_DIR}/build
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the consumer failed (${rc}):\n${out}\n${err}")
endif()
message(STATUS "consumer: ${out}")
message(STATUS "consumer project built against the installed package (staticformer::io) and ran")
