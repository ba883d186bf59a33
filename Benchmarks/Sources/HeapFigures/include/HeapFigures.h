#ifndef NAVIGATION_VALUES_HEAP_FIGURES_H
#define NAVIGATION_VALUES_HEAP_FIGURES_H

/// Bytes the process's heap has handed out and not taken back, over every arena and the blocks
/// glibc maps on their own (`mallinfo2`'s `uordblks + hblkhd`): what the program holds, apart
/// from how the allocator lays it out in pages, which VmRSS adds. Glibc walks its arenas under
/// their locks to answer, so call it between phases, not on a hot path.
unsigned long long nv_heap_bytes_in_use(void);

/// Bytes glibc holds from the system for the heap (`arena + hblkhd`), in use or free.
unsigned long long nv_heap_bytes_from_system(void);

#endif
