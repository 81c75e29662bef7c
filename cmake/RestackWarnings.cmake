# Warnings are errors in every Restack target; third-party headers are included as SYSTEM.
add_library(restack_warnings INTERFACE)
target_compile_options(restack_warnings INTERFACE
  -Wall -Wextra -Werror -Wno-unused-parameter -Wnon-virtual-dtor -Wimplicit-fallthrough)

if(RESTACK_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()

# Fuzzing builds instrument every library for coverage and memory errors, so the fuzz targets
# (which link -fsanitize=fuzzer) explore and check the parsers themselves, not only their entry.
if(RESTACK_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# restack_library(NAME SOURCES... DEPS ...) declares a static library with the project's warnings.
function(restack_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${name} STATIC ${ARG_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC ${ARG_DEPS} PRIVATE restack_warnings ${ARG_PRIVATE_DEPS})
endfunction()
