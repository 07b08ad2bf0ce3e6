#ifndef OPENSTOREKIT_CSQLITE_SHIM_H
#define OPENSTOREKIT_CSQLITE_SHIM_H
#include <sqlite3.h>
// SQLITE_TRANSIENT is a cast macro that Swift does not import.
static inline int shim_sqlite3_bind_text_transient(sqlite3_stmt *s, int i, const char *z, int n) {
    return sqlite3_bind_text(s, i, z, n, SQLITE_TRANSIENT);
}
static inline int shim_sqlite3_bind_blob_transient(sqlite3_stmt *s, int i, const void *z, int n) {
    return sqlite3_bind_blob(s, i, z, n, SQLITE_TRANSIENT);
}
#endif
