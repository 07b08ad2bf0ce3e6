#ifndef OPENSTOREKIT_CMICROHTTPD_SHIM_H
#define OPENSTOREKIT_CMICROHTTPD_SHIM_H
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>
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

/* Called once a request line has arrived, with its whole target (path and query): the request's
   context starts as the target's length, tagged with the low bit so it is never taken for an object
   (the access handler replaces it with the request's state; nothing is allocated here, so nothing
   leaks when a request ends before the access handler runs). */
static inline void *openstorekit_note_target(void *context, const char *uri, struct MHD_Connection *connection) {
    (void)context; (void)connection;
    size_t length = 0;
    while (uri[length] != 0) { length++; }
    return (void *)(((uintptr_t)length << 1) | 1);
}

/* Where libmicrohttpd's own error log goes: one formatted line at a time (at most 511 bytes) to
   `line`, with `context`, instead of the process's standard error, so the server can bound it (a
   client sending malformed requests as fast as it can must not write megabytes). */
struct openstorekit_log_sink {
    void (*line)(void *context, const char *text);
    void *context;
};

static inline void openstorekit_forward_log(void *sink_pointer, const char *format, va_list arguments) {
    struct openstorekit_log_sink *sink = (struct openstorekit_log_sink *)sink_pointer;
    char text[512];
    vsnprintf(text, sizeof text, format, arguments);
    sink->line(sink->context, text);
}

/* Whether libmicrohttpd cut a header value at a NUL byte. It reads each header line up to its CR or
   LF, but takes the value as a C string, so `Content-Length: 0<NUL>216` is read as `0`, and a proxy
   that drops NULs would read 0216. The header lines stay in the connection's read buffer, in order,
   each value followed by its line's end (turned into NULs) and then the next line's name: so any
   byte other than NUL, space or tab between one value's end and the next name, or right after the
   last value's end (where the line's end and the empty line follow), is a part of a value the
   server never saw. Entries not laid out so (not in order, or far apart) are not judged. */
struct openstorekit_header_scan {
    const char *previous_end;
    int truncated;
};

static inline enum MHD_Result openstorekit_scan_header(void *context, enum MHD_ValueKind kind, const char *key, size_t key_size,
                                                       const char *value, size_t value_size) {
    (void)kind;
    struct openstorekit_header_scan *scan = (struct openstorekit_header_scan *)context;
    if (scan->previous_end != NULL && key > scan->previous_end && key - scan->previous_end < 4096) {
        for (const char *byte = scan->previous_end; byte < key; byte++) {
            if (*byte != 0 && *byte != ' ' && *byte != '\t') { scan->truncated = 1; break; }
        }
    }
    scan->previous_end = value != NULL ? value + value_size : key + key_size;
    return MHD_YES;
}

static inline int openstorekit_header_truncated(struct MHD_Connection *connection) {
    struct openstorekit_header_scan scan = { NULL, 0 };
    MHD_get_connection_values_n(connection, MHD_HEADER_KIND, openstorekit_scan_header, &scan);
    if (scan.truncated) return 1;
    /* After the last value: its line's end and the empty line, at least two bytes, both NULs now. */
    if (scan.previous_end != NULL && scan.previous_end[0] == 0 && scan.previous_end[1] != 0) return 1;
    return 0;
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
                                                           unsigned int per_address_limit,
                                                           struct openstorekit_log_sink *log_sink) {
    unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
    struct MHD_OptionItem options[] = {
        { MHD_OPTION_CONNECTION_TIMEOUT, idle_timeout_seconds, NULL },
        { MHD_OPTION_CONNECTION_LIMIT, connection_limit, NULL },
        { MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit, NULL },
        { MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL },
        { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)connection_notice, context },
        { MHD_OPTION_URI_LOG_CALLBACK, (intptr_t)openstorekit_note_target, NULL },
        { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)openstorekit_forward_log, log_sink },
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

/* A connection's socket, for the request deadline and the room for new connections to shut down (see ConnectionLimits). */
static inline int openstorekit_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? (int)info->connect_fd : -1;
}

/* The client's address as text (an IPv4 or IPv6 address) into `text`, or "" when unknown. */
static inline void openstorekit_client_address(struct MHD_Connection *connection, char *text, socklen_t size) {
    text[0] = 0;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) { return; }
    const struct sockaddr *address = info->client_addr;
    if (address->sa_family == AF_INET) {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)address)->sin_addr, text, size);
    } else if (address->sa_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)address)->sin6_addr, text, size);
    }
}

/* The port a daemon listens on (the one the kernel picked for port 0). */
static inline uint16_t openstorekit_daemon_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info ? info->port : 0;
}
#endif
