#ifndef NAVIGATION_VALUES_MALLOC_COUNTER_H
#define NAVIGATION_VALUES_MALLOC_COUNTER_H

/// Heap allocations (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign) made by
/// every thread of this process since it started. Linking this target replaces those functions
/// in the whole process (the executable's definitions win over libc's for every shared library),
/// each counting one and handing the work to glibc's own (`__libc_malloc` and friends).
unsigned long long nv_allocation_count(void);

#endif
