import COpenSSL

// OpenSSL, by default, registers an `atexit` handler that frees its state (`OPENSSL_cleanup`) when
// the process exits. Apps verify in listeners that run until the app exits (`Transaction.updates`,
// `currentEntitlements` loops), so a call to `exit` while one of them verifies would run that
// cleanup under the verification, which then crashes (the algorithm fetch in `EVP_Digest` fails).
//
// OpenSSL registers the handler only once, at the first initialisation that does not say
// `OPENSSL_INIT_NO_ATEXIT`, and never when the first one does. So the first initialisation must be
// ours, and it must come before any other library's (libcurl, under Foundation's URLSession, and
// libpq initialise OpenSSL for themselves): it runs as the program is loaded, before `main`, from the
// ELF initialiser list. The operating system frees the process's memory anyway; nothing is lost.

#if os(Linux)
/// Initialises OpenSSL without its exit-time cleanup; called by the dynamic loader before `main`.
@_cdecl("openstorekit_initialize_openssl_without_exit_cleanup")
func initializeOpenSSLWithoutExitCleanup() {
    _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
}

@used @section(".init_array")
let openSSLInitializerAtLoad: @convention(c) () -> Void = initializeOpenSSLWithoutExitCleanup
#endif
