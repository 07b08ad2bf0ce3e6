#ifndef OPENSTOREKIT_CMICROHTTPD_SHIM_H
#define OPENSTOREKIT_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* MHD_start_daemon is variadic, which Swift cannot call: this fixed-argument form starts a daemon
   with one thread per connection on `address`, the completion callback, an idle timeout and a
   connection limit. */
static inline struct MHD_Daemon *openstorekit_start_daemon(const struct sockaddr *address,
                                                           MHD_AccessHandlerCallback handler, void *context,
                                                           MHD_RequestCompletedCallback completed,
                                                           unsigned int idle_timeout_seconds,
                                                           unsigned int connection_limit) {
    /* poll(), not select(): with select() libmicrohttpd drops every connection whose descriptor is
       1024 or more (FD_SETSIZE) without an answer, which a busy process (a test run, a server that
       also holds many files) reaches. */
    unsigned int flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, NULL,
                            MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_LISTENING_ADDRESS_REUSE, (unsigned int)1,
                            MHD_OPTION_END);
}

/* The port a daemon listens on (the one the kernel picked for port 0). */
static inline uint16_t openstorekit_daemon_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}
#endif
