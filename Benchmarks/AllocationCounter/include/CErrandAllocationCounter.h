// Counts the process's heap allocations for the benchmarks' allocs/op: the executable defines
// malloc and its siblings, which every library loaded — libcurl through dlopen too — then
// calls, and hands each to glibc's own. Only on glibc; elsewhere nothing is counted.
#ifndef CERRANDALLOCATIONCOUNTER_H
#define CERRANDALLOCATIONCOUNTER_H

#include <stdint.h>

/// 1 where allocations can be counted (glibc), 0 elsewhere.
int errand_allocation_counting_available(void);

/// Starts (1) or stops (0) counting. Off by default: the shared counter's atomic add costs
/// every allocation of every thread, which would show in the other benchmarks' timings.
void errand_allocation_counting_enable(int enabled);

/// 1 while counting.
int errand_allocation_counting_enabled(void);

/// The allocations counted so far: malloc, calloc, realloc and the aligned ones, each one.
uint64_t errand_allocation_count(void);

#endif
