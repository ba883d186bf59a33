// Linux headers that Swift's Glibc module leaves out: epoll and eventfd (HTTPServer's event loops).
#ifndef CHTTPSYSTEM_SHIM_H
#define CHTTPSYSTEM_SHIM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>

#endif
