#ifndef OPENSTOREKIT_UNIFIED_LOGGING_OS_H
#define OPENSTOREKIT_UNIFIED_LOGGING_OS_H
// `import os` finds this module; its Swift overlay (Sources/os) holds the API. The one declaration
// here is what the overlay's log lines need from the C library and Swift's Glibc module leaves out.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <unistd.h>

/// The kernel's id of the calling thread, as log lines show it.
static inline unsigned long long _os_log_current_thread_id(void) { return (unsigned long long)gettid(); }
#endif
