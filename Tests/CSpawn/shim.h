// What TestSupport's ChildProcess needs from glibc that Swift's Glibc module leaves out: the GNU
// extensions of <spawn.h>, <unistd.h> and <pthread.h> (declared only under _GNU_SOURCE, which that
// module is built without) and `environ`.
#ifndef CSPAWN_SHIM_H
#define CSPAWN_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stddef.h>
#include <unistd.h>

/// The calling process's environment (environ(7)): the child's when none is given.
extern char **environ;

/// pipe2(2): both ends are close-on-exec from the start, so no child spawned meanwhile by another
/// thread inherits them, as it can one marked by fcntl(2) right after pipe(2).
extern int pipe2(int fds[2], int flags);

/// pthread_setname_np(3): names a thread as `ps -L` and /proc show it (at most 15 bytes).
extern int pthread_setname_np(pthread_t thread, const char *name);

// Weak, so that the module still links against a glibc without them; the wrappers below then
// answer ENOSYS instead of crashing on a null function.
extern int posix_spawn_file_actions_addchdir_np(posix_spawn_file_actions_t *actions, const char *path)
    __attribute__((weak));  // glibc 2.29
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from)
    __attribute__((weak));  // glibc 2.34

/// posix_spawn_file_actions_addchdir_np(3): the child changes to `path` before it execs; ENOSYS
/// when this glibc has no such call.
static inline int cspawn_add_chdir(posix_spawn_file_actions_t *actions, const char *path) {
    if (posix_spawn_file_actions_addchdir_np == NULL) return ENOSYS;
    return posix_spawn_file_actions_addchdir_np(actions, path);
}

/// posix_spawn_file_actions_addclosefrom_np(3): the child closes every descriptor from `from` up
/// before it execs; ENOSYS when this glibc has no such call.
static inline int cspawn_add_close_from(posix_spawn_file_actions_t *actions, int from) {
    if (posix_spawn_file_actions_addclosefrom_np == NULL) return ENOSYS;
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

#endif
