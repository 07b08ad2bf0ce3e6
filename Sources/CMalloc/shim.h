#ifndef OPENSTOREKIT_CMALLOC_SHIM_H
#define OPENSTOREKIT_CMALLOC_SHIM_H
// glibc's allocator settings (mallopt), which Swift's Glibc module leaves out.
#include <malloc.h>
#endif
