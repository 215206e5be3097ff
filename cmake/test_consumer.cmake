# Installs staticformer into a prefix, then configures and builds a tiny consumer
# project that uses find_package(staticformer), and runs it.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR}/src)
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed: ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR}/lib-build -DCMAKE_CXX_COMPILER=${CXX}
    -DSTATICFORMER_BUILD_TESTS=OFF -DSTATICFORMER_BUILD_EXAMPLES=OFF -DSTATICFORMER_BUILD_BENCHMARKS=OFF
    -DCMAKE_INSTALL_PREFIX=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --install ${WORK_DIR}/lib-build)
file(WRITE ${WORK_DIR}/src/CMakeLists.txt [=[
cmake_minimum_required(VERSION 3.20)
project(consumer LANGUAGES CXX)
find_package(staticformer 0.1 REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE staticformer::staticformer)
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
int main() { return f() == 6.0f ? 0 : 1; }
]=])
run(${CMAKE_COMMAND} -S ${WORK_DIR}/src -B ${WORK_DIR}/build -DCMAKE_CXX_COMPILER=${CXX}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer)
message(STATUS "consumer project built against the installed package and ran")
