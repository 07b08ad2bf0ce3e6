#ifndef OPENSTOREKIT_CMICROHTTPD_SHIM_H
#define OPENSTOREKIT_CMICROHTTPD_SHIM_H
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* Leaves the request's path and query as they came on the wire: the server decodes them itself, once
   (libmicrohttpd's own decoding runs before the path is split, so %2F would split a segment and an
   encoded %00 would end the path). */
static inline size_t openstorekit_keep_escaped(void *context, struct MHD_Connection *connection, char *text) {
    (void)context; (void)connection;
    size_t length = 0;
    while (text[length] != 0) { length++; }
    return length;
}

/* MHD_start_daemon is variadic, which Swift cannot call: this fixed-argument form starts a daemon
   that polls its connections with epoll on `polling_threads` internal threads and lets handlers
   suspend connections while they work (MHD_ALLOW_SUSPEND_RESUME), so no thread waits for a handler.

   It listens on `listen_socket` when that is not -1 (a socket the caller bound and set listening;
   the daemon closes it when it stops), else on `address`. The address is bound without
   SO_REUSEPORT: a port another server listens on is an error, never a port two servers share. */
static inline struct MHD_Daemon *openstorekit_start_daemon(const struct sockaddr *address, int listen_socket,
                                                           MHD_AccessHandlerCallback handler, void *context,
                                                           MHD_RequestCompletedCallback completed,
                                                           MHD_NotifyConnectionCallback connection_notice,
                                                           unsigned int polling_threads,
                                                           unsigned int idle_timeout_seconds,
                                                           unsigned int connection_limit,
                                                           unsigned int per_address_limit) {
    unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem options[] = {
        { MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds, NULL },
        { MHD_OPTION_CONNECTION_LIMIT, connection_limit, NULL },
        { MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit, NULL },
        { MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL },
        { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)connection_notice, context },
        { polling_threads > 1 ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, polling_threads, NULL },
        { MHD_OPTION_END, 0, NULL },
    };
    if (listen_socket >= 0) {
        return MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                                MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_socket,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, context,
                                MHD_OPTION_UNESCAPE_CALLBACK, openstorekit_keep_escaped, NULL,
                                MHD_OPTION_ARRAY, options,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, context,
                            MHD_OPTION_SOCK_ADDR, address,
                            MHD_OPTION_NOTIFY_COMPLETED, completed, context,
                            MHD_OPTION_UNESCAPE_CALLBACK, openstorekit_keep_escaped, NULL,
                            MHD_OPTION_ARRAY, options,
                            MHD_OPTION_END);
}

/* A connection's socket, for the request deadline's sweep to shut down (see RequestDeadlines). */
static inline int openstorekit_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? (int)info->connect_fd : -1;
}

/* The port a daemon listens on (the one the kernel picked for port 0). */
static inline uint16_t openstorekit_daemon_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}
#endif
