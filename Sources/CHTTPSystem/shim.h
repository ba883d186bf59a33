// Linux headers that Swift's Glibc module leaves out: epoll and eventfd (HTTPServer's event loops),
// prctl(2), variadic, which Swift cannot call directly (the loops and workers name their threads),
// and mallopt(3) from malloc.h (`serve` tunes the allocator).
#ifndef CHTTPSYSTEM_SHIM_H
#define CHTTPSYSTEM_SHIM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <malloc.h>

/// Names the calling thread (at most 15 bytes are kept), as `ps -L` and /proc show it.
static inline int chttp_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

#endif
