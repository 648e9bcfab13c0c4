#include "CErrandAllocationCounter.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#if defined(__GLIBC__)
#include <errno.h>

// glibc's allocator under its own names: what these definitions forward to.
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static atomic_bool counting;
static atomic_uint_fast64_t allocations;

static inline void count(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    }
}

void *malloc(size_t size) {
    count();
    return __libc_malloc(size);
}

void *calloc(size_t count_, size_t size) {
    count();
    return __libc_calloc(count_, size);
}

void *realloc(void *pointer, size_t size) {
    count();
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    count();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

int errand_allocation_counting_available(void) { return 1; }

void errand_allocation_counting_enable(int enabled) {
    atomic_store_explicit(&counting, enabled != 0, memory_order_relaxed);
}

int errand_allocation_counting_enabled(void) { return atomic_load_explicit(&counting, memory_order_relaxed); }

uint64_t errand_allocation_count(void) { return atomic_load_explicit(&allocations, memory_order_relaxed); }

#else

int errand_allocation_counting_available(void) { return 0; }
void errand_allocation_counting_enable(int enabled) { (void)enabled; }
int errand_allocation_counting_enabled(void) { return 0; }
uint64_t errand_allocation_count(void) { return 0; }

#endif
