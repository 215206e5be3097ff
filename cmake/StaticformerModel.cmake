# staticformer_add_model: an executable for one architecture, built by your own project.
#
#   find_package(staticformer REQUIRED)
#   staticformer_add_model(my_model CONFIG shape.json)                 # the `staticformer` command's
#   staticformer_add_model(my_trainer CONFIG shape.json KIND train BATCH 8)   # executables for it
#   staticformer_add_model(my_app MODEL m.safetensors SOURCES main.cpp)       # your program
#
# CONFIG FILE.json (the checkpoint metadata keys, as `staticformer train --config` reads them) or
# MODEL FILE.safetensors (a checkpoint) gives the architecture. The target is compiled with the
# header `staticformer header` writes for it (force-included), which defines SF_ENGINE_ARCH (an
# sf::config expression) and, for KIND train, SF_ENGINE_BATCH and SF_ENGINE_PRECISION. Without
# SOURCES the target is the `staticformer` command's own executable for that architecture: KIND
# run (default; `my_model run MODEL -n 200 ...`, `export`, `convert`) or train (`train`, `bench`;
# BATCH, default 4 or a named shape's own, and PRECISION f32|bf16). With SOURCES it is your program,
# which uses SF_ENGINE_ARCH:  static sf::params<SF_ENGINE_ARCH> weights;
# The header is regenerated when the file changes. Either way the target also compiles the start-up
# CPU check (cpu_check.cpp, installed beside the engine sources; src/cpu_check.cpp), with the
# target's own flags: built for instructions the CPU running it lacks (-march=native on another
# machine), it stops with a message naming them instead of dying of SIGILL.
function(staticformer_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 A "" "CONFIG;MODEL;KIND;BATCH;PRECISION" "SOURCES")
  if(A_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "staticformer_add_model(${target}): unknown arguments ${A_UNPARSED_ARGUMENTS}")
  endif()
  if((A_CONFIG AND A_MODEL) OR (NOT A_CONFIG AND NOT A_MODEL))
    message(FATAL_ERROR "staticformer_add_model(${target}): give CONFIG file.json or MODEL file.safetensors (one of them)")
  endif()
  if(NOT EXISTS "${STATICFORMER_COMMAND}")
    message(FATAL_ERROR "staticformer_add_model(${target}): the staticformer command (${STATICFORMER_COMMAND}) is not "
                        "installed: build and install staticformer with STATICFORMER_BUILD_TOOLS=ON")
  endif()
  if(NOT A_KIND)
    set(A_KIND run)
  endif()
  if(NOT A_KIND MATCHES "^(run|train)$")
    message(FATAL_ERROR "staticformer_add_model(${target}): KIND is run or train, not '${A_KIND}'")
  endif()
  if(A_CONFIG)
    get_filename_component(file "${A_CONFIG}" ABSOLUTE)
    set(input --config "${file}")
  else()
    get_filename_component(file "${A_MODEL}" ABSOLUTE)
    set(input "${file}")
  endif()
  set(arch "${CMAKE_CURRENT_BINARY_DIR}/staticformer_${target}/staticformer_arch.hpp")
  file(MAKE_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}/staticformer_${target}")
  set(args header ${input} --kind ${A_KIND} -o "${arch}")
  if(A_BATCH)
    list(APPEND args --batch ${A_BATCH})
  endif()
  if(A_PRECISION)
    list(APPEND args --precision ${A_PRECISION})
  endif()
  add_custom_command(OUTPUT "${arch}" COMMAND ${STATICFORMER_COMMAND} ${args}
                     DEPENDS "${file}" ${STATICFORMER_COMMAND_DEPENDS}
                     COMMENT "staticformer: the architecture of ${file}" VERBATIM)
  if(A_SOURCES)
    set(sources ${A_SOURCES})
  else()
    set(sources "${STATICFORMER_ENGINE_SOURCE_DIR}/staticformer/engine_${A_KIND}.cpp")
  endif()
  add_executable(${target} ${sources} "${STATICFORMER_ENGINE_SOURCE_DIR}/cpu_check.cpp" "${arch}")
  target_compile_options(${target} PRIVATE "SHELL:-include \"${arch}\"")
  target_link_libraries(${target} PRIVATE ${STATICFORMER_MODEL_LIBRARIES})
endfunction()
