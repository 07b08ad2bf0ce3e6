#ifndef OPENSTOREKIT_CMICROHTTPD_SHIM_H
#define OPENSTOREKIT_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>
#endif
