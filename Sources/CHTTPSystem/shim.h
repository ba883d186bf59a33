// Linux headers that Swift's Glibc module leaves out: epoll and eventfd (HTTPServer's event loops),
// prctl(2), variadic, which Swift cannot call directly (the loops and workers name their threads),
// and mallopt(3) from malloc.h (`serve` tunes the allocator).
#ifndef CHTTPSYSTEM_SHIM_H
#define CHTTPSYSTEM_SHIM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/socket.h>
#include <fcntl.h>

/// Names the calling thread (at most 15 bytes are kept), as `ps -L` and /proc show it.
static inline int chttp_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/// accept4(2) and pipe2(2), which Glibc's module hides behind _GNU_SOURCE: a descriptor made with
/// SOCK_CLOEXEC / O_CLOEXEC is never inherited by a child spawned by another thread meanwhile, as
/// one marked by fcntl right after accept(2) or pipe(2) can be.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);
extern int pipe2(int fds[2], int flags);

static inline int chttp_accept_cloexec(int fd, struct sockaddr *address, socklen_t *length) {
    return accept4(fd, address, length, SOCK_CLOEXEC | SOCK_NONBLOCK);
}

static inline int chttp_pipe_cloexec(int fds[2]) {
    return pipe2(fds, O_CLOEXEC | O_NONBLOCK);
}

#endif
