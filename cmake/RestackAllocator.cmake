# Executables allocate through jemalloc (Debian's libjemalloc-dev) with transparent huge pages;
# why and the measured effect: worker/allocator/jemalloc_conf.cc. Sanitizer and fuzz builds keep
# the sanitizers' allocator, which must own malloc to find memory errors.
option(RESTACK_JEMALLOC "Link Restack's executables with jemalloc instead of glibc malloc" ON)
if(RESTACK_SANITIZE OR RESTACK_FUZZ)
  set(RESTACK_JEMALLOC OFF)
endif()

if(RESTACK_JEMALLOC)
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
  # An OBJECT library: its one object (the `malloc_conf` definition, which nothing references)
  # is linked into every executable instead of being dropped as an unused archive member.
  add_library(restack_jemalloc_conf OBJECT ${PROJECT_SOURCE_DIR}/worker/allocator/jemalloc_conf.cc)
endif()

# restack_use_allocator(TARGET): link TARGET (an executable) with the project's allocator.
function(restack_use_allocator target)
  if(RESTACK_JEMALLOC)
    target_link_libraries(${target} PRIVATE restack_jemalloc_conf PkgConfig::JEMALLOC)
  endif()
endfunction()
