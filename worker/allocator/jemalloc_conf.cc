// Restack's executables allocate through jemalloc instead of glibc malloc (cmake/RestackAllocator.cmake).
//
// Why: the hot path restores frames against decoded symbol records spread over hundreds of MB
// (ProGuard class records, source-map segments, native line tables), one small output string
// after another. Measured with loadtest/proguard/proguard_bench (docs/benchmarks.md): glibc's
// malloc costs ~20 % of a warm retrace, and 4 KiB pages make most record reads a TLB miss.
// jemalloc's thread caches remove the first, transparent huge pages (`thp:always`: jemalloc
// asks the kernel for 2 MiB pages on the memory it maps, which works with the kernel's default
// "madvise" THP mode) the second: 481k -> 702k frames/s on one core.
//
// These are defaults compiled into the binary; operators override them at start-up with the
// MALLOC_CONF environment variable, whose settings jemalloc applies after these (for example
// MALLOC_CONF=thp:default to keep the kernel's page policy). See docs/operations.md.
extern "C" {
// jemalloc reads this symbol before the first allocation. Its name is fixed by jemalloc.
// NOLINTNEXTLINE(readability-identifier-naming)
const char* malloc_conf = "thp:always,metadata_thp:auto";
}
