// The heap's own figures for benchmarks that report memory: VmRSS says what the process costs
// the machine, these say how much of it the program holds and how much is the allocator's
// slack, so a change in RSS can be told apart from a change in what the code allocates.
#include <malloc.h>

#include "HeapFigures.h"

unsigned long long nv_heap_bytes_in_use(void) {
    struct mallinfo2 figures = mallinfo2();
    return (unsigned long long)figures.uordblks + (unsigned long long)figures.hblkhd;
}

unsigned long long nv_heap_bytes_from_system(void) {
    struct mallinfo2 figures = mallinfo2();
    return (unsigned long long)figures.arena + (unsigned long long)figures.hblkhd;
}
