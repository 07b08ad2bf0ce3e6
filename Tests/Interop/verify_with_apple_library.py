#!/usr/bin/env python3
"""Verifies JWS files with Apple's own App Store Server Library (PyPI app-store-server-library).

Usage: verify_with_apple_library.py [--online-checks] ROOT_DER ENVIRONMENT BUNDLE_ID APP_APPLE_ID KIND=FILE...

KIND is transaction, renewal, notification or app-transaction. Prints one JSON object mapping each
FILE to "OK" or the library's VerificationStatus name. Runs in the library's default strict mode;
with --online-checks as production backends run it: the chain judged at the real time, and each
certificate's revocation asked of the OCSP responder it names.
"""
import json
import sys

from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier, VerificationException


def main() -> int:
    arguments = sys.argv[1:]
    online = arguments[:1] == ["--online-checks"]
    if online:
        arguments = arguments[1:]
    root_path, environment, bundle_id, app_apple_id = arguments[0:4]
    with open(root_path, "rb") as handle:
        root = handle.read()
    verifier = SignedDataVerifier(
        [root], online, Environment(environment), bundle_id, int(app_apple_id) if app_apple_id != "-" else None
    )
    methods = {
        "transaction": verifier.verify_and_decode_signed_transaction,
        "renewal": verifier.verify_and_decode_renewal_info,
        "notification": verifier.verify_and_decode_notification,
        "app-transaction": verifier.verify_and_decode_app_transaction,
    }
    results = {}
    for argument in arguments[4:]:
        kind, path = argument.split("=", 1)
        with open(path) as handle:
            jws = handle.read().strip()
        try:
            methods[kind](jws)
            results[path] = "OK"
        except VerificationException as error:
            results[path] = error.status.name
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
