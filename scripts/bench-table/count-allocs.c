// Counts heap allocations in the process it is preloaded into (LD_PRELOAD), for
// scripts/bench-table.sh --allocs: malloc, calloc, realloc, posix_memalign, aligned_alloc and
// memalign forward to glibc's own (__libc_*) and add one to a counter; SIGUSR2 writes
// "allocations N" to stderr (write(2) only: async-signal-safe), so a run's allocations are the
// difference between two readings.
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong allocations;

void *malloc(size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_malloc(size);
}
void *calloc(size_t count, size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_calloc(count, size);
}
void *realloc(void *pointer, size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_realloc(pointer, size);
}
void *memalign(size_t alignment, size_t size) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    return __libc_memalign(alignment, size);
}
void *aligned_alloc(size_t alignment, size_t size) { return memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    void *pointer = memalign(alignment, size);
    if (!pointer) return ENOMEM;
    *out = pointer;
    return 0;
}

static void report(int signal) {
    (void)signal;
    char line[64] = "allocations ", digits[24];
    unsigned long value = atomic_load(&allocations);
    int n = 0;
    do digits[n++] = '0' + value % 10; while ((value /= 10) && n < 24);
    size_t at = strlen(line);
    while (n) line[at++] = digits[--n];
    line[at++] = '\n';
    ssize_t ignored = write(2, line, at);
    (void)ignored;
}

__attribute__((constructor)) static void install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = report;
    action.sa_flags = SA_RESTART;
    sigaction(SIGUSR2, &action, 0);
}
