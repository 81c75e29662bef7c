// restack_loadtest's jemalloc settings, in place of the worker's (worker/allocator/jemalloc_conf.cc).
//
// The worker asks for transparent huge pages on all its memory (thp:always) because it reads
// large symbol caches at random. This tool holds no such caches: it allocates and frees event
// texts, expectations and librdkafka's message copies and buffers at a high rate, often on one
// thread and freed on another, and with thp:always it kept faulting in fresh 2 MiB pages that the
// kernel zeroes (clear_page_erms was the first symbol of its main thread in `perf record`).
// With the kernel's own policy those faults are gone and producing flat out cost 7.5-12.0 instead
// of 8.2-14.8 ms per 1,000 events; at a steady rate the two measured the same (docs/benchmarks.md,
// "The load generator's own cost").
//
// tcache_max:131072: librdkafka's lz4 compression callocs a ~68 KiB context for every batch it
// produces. Above the thread cache's default limit (32 KiB) jemalloc takes such a block from its
// arena and, unless thp:always, zeroes it by madvise(MADV_DONTNEED), whose pages then fault back
// in; from the thread cache it is a memset. At a steady rate (small batches) that was about 5 % of
// this tool's samples; with the larger cache, about 1.5 %. MALLOC_CONF still overrides all this at
// start-up.
extern "C" {
// jemalloc reads this symbol before the first allocation. Its name is fixed by jemalloc.
// NOLINTNEXTLINE(readability-identifier-naming)
const char* malloc_conf = "thp:default,tcache_max:131072";
}
