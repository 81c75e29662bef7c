# Every dependency comes from Debian 12's packages (scripts/setup.sh installs them).
find_package(PkgConfig REQUIRED)
pkg_check_modules(RDKAFKA REQUIRED IMPORTED_TARGET rdkafka)
pkg_check_modules(RDKAFKAXX REQUIRED IMPORTED_TARGET rdkafka++)
find_package(RocksDB 7.8 REQUIRED CONFIG)
find_package(simdjson REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(spdlog REQUIRED)
find_package(ZLIB REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)
pkg_check_modules(LIBZIP REQUIRED IMPORTED_TARGET libzip)  # libzip's CMake package needs libzip-tools
find_package(CURL REQUIRED)
pkg_check_modules(MICROHTTPD REQUIRED IMPORTED_TARGET libmicrohttpd)  # the /healthz, /metrics server
find_package(Threads REQUIRED)

# LLVM 19: "19" alone is rejected by the config's version check, and llvm-14 is also installed.
find_package(LLVM 19.1 REQUIRED CONFIG PATHS /usr/lib/llvm-19/lib/cmake/llvm NO_DEFAULT_PATH)
# Only LLVM's own include folders: /usr/lib/llvm-19/include may also carry libc++abi headers
# that shadow libstdc++'s <cxxabi.h>.
set(RESTACK_LLVM_INCLUDE ${CMAKE_BINARY_DIR}/llvm-include)
file(MAKE_DIRECTORY ${RESTACK_LLVM_INCLUDE})
foreach(sub llvm llvm-c)
  if(NOT EXISTS ${RESTACK_LLVM_INCLUDE}/${sub})
    file(CREATE_LINK ${LLVM_INCLUDE_DIR}/${sub} ${RESTACK_LLVM_INCLUDE}/${sub} SYMBOLIC)
  endif()
endforeach()
add_library(restack_llvm INTERFACE)
target_include_directories(restack_llvm SYSTEM INTERFACE ${RESTACK_LLVM_INCLUDE})
target_compile_definitions(restack_llvm INTERFACE ${LLVM_DEFINITIONS})
target_link_libraries(restack_llvm INTERFACE LLVM)

if(RESTACK_TESTS)
  find_package(GTest REQUIRED)
endif()
if(RESTACK_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()
