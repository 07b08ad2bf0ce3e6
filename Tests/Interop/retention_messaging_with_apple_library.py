#!/usr/bin/env python3
"""Calls every Retention Messaging API endpoint of a local store with Apple's own AppStoreServerAPIClient
(PyPI app-store-server-library), only its base URL pointed at the store, and checks the documented error
cases. It serves a Get Retention Message endpoint of its own for the performance test, and verifies every
real-time request the store posts with Apple's SignedDataVerifier.

Usage: retention_messaging_with_apple_library.py BASE_URL KEY_JSON ROOT_DER BUNDLE_ID ENVIRONMENT SCENARIO_JSON

SCENARIO_JSON: {"subscriptionOriginalId", "renewalId", "subscriptionProductId", "consumableProductId"}.
Prints one JSON object: each call's outcome, the real-time requests verified, and the failures.
"""
import http.server
import json
import struct
import sys
import threading
import time
import uuid
import zlib

import requests
from appstoreserverlibrary.api_client import AppStoreServerAPIClient, APIException
from appstoreserverlibrary.models.DefaultConfigurationRequest import DefaultConfigurationRequest
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.ImageSize import ImageSize
from appstoreserverlibrary.models.PerformanceTestRequest import PerformanceTestRequest
from appstoreserverlibrary.models.PerformanceTestStatus import PerformanceTestStatus
from appstoreserverlibrary.models.RealtimeUrlRequest import RealtimeUrlRequest
from appstoreserverlibrary.models.UploadMessageImage import UploadMessageImage
from appstoreserverlibrary.models.UploadMessageRequestBody import UploadMessageRequestBody
from appstoreserverlibrary.models.BulletPoint import BulletPoint
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier


def png(width, height, alpha=False):
    """A PNG of one colour: colour type 2 (RGB) or 6 (RGBA, so it can be transparent)."""
    channels = 4 if alpha else 3
    row = b"\x00" + b"\x80" * (width * channels)
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    header = struct.pack(">IIBBBBB", width, height, 8, 6 if alpha else 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b"")


def main() -> int:
    base_url, key_path, root_path, bundle_id, environment, scenario_path = sys.argv[1:7]
    key = json.load(open(key_path))
    scenario = json.load(open(scenario_path))
    client = AppStoreServerAPIClient(key["privateKey"].encode(), key["keyId"], key["issuerId"], bundle_id, Environment(environment))
    client._base_url = base_url
    verifier = SignedDataVerifier([open(root_path, "rb").read()], False, Environment(environment), bundle_id, None)
    report = {"calls": {}, "failures": [], "realtimeVerified": 0, "realtimeRefused": 0}
    counting = threading.Lock()

    def call(name, body):
        try:
            report["calls"][name] = body()
        except APIException as error:
            report["calls"][name] = {"status": error.http_status_code, "errorCode": error.raw_api_error}
        except Exception as error:  # noqa: BLE001 - every failure is reported
            report["failures"].append(f"{name}: {error!r}")

    def raw(method, path, body):
        """A request the library's own validators would not let through (a header that is too long)."""
        answer = requests.request(method, base_url + path, headers=client._get_headers(), json=body, timeout=30)
        try:
            client._parse_response(answer.status_code, answer.headers, lambda: answer.json(), None)
            return "accepted"
        except APIException as error:
            return {"status": error.http_status_code, "errorCode": error.raw_api_error}

    # A Get Retention Message endpoint: every request's signed payload verified with Apple's verifier.
    message_id = str(uuid.uuid4())
    class Endpoint(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            try:
                decoded = verifier.verify_and_decode_realtime_request(body["signedPayload"])
                assert decoded.originalTransactionId == str(scenario["subscriptionOriginalId"]), decoded
                assert decoded.productId == scenario["subscriptionProductId"], decoded
                with counting:
                    report["realtimeVerified"] += 1
            except Exception as error:  # noqa: BLE001
                with counting:
                    report["realtimeRefused"] += 1
                    report["failures"].append(f"real-time request: {error!r}")
            answer = json.dumps({"message": {"messageIdentifier": message_id}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
        def log_message(self, *args):
            pass
    endpoint = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=endpoint.serve_forever, daemon=True).start()
    realtime_url = f"http://127.0.0.1:{endpoint.server_address[1]}/retention"

    image_id, bullet_id, unused_id = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    product, locale = scenario["subscriptionProductId"], "en-US"

    # Images.
    call("uploadImage", lambda: client.upload_image(image_id, png(3840, 160)) or "uploaded")
    call("uploadImageBullet", lambda: client.upload_image(bullet_id, png(1024, 1024), ImageSize.BULLET_POINT) or "uploaded")
    call("uploadImageUnused", lambda: client.upload_image(unused_id, png(3840, 2160)) or "uploaded")
    call("uploadImageAgain", lambda: client.upload_image(image_id, png(3840, 160)))
    call("uploadImageTransparent", lambda: client.upload_image(uuid.uuid4(), png(3840, 160, alpha=True)))
    call("uploadImageWrongSize", lambda: client.upload_image(uuid.uuid4(), png(3840, 100)))
    call("uploadImageNotPNG", lambda: client.upload_image(uuid.uuid4(), b"GIF89a not a png"))
    call("uploadImageBulletWrongSize", lambda: client.upload_image(uuid.uuid4(), png(512, 512), ImageSize.BULLET_POINT))
    def images():
        listed = client.get_image_list().imageIdentifiers or []
        return sorted([str(item.imageIdentifier), item.imageState.value, item.imageSize.value] for item in listed)
    call("getImageList", images)

    # Messages.
    message = UploadMessageRequestBody(header="Before you go", body="Your projects stay in sync on every device.",
                                       image=UploadMessageImage(imageIdentifier=image_id, altText="A synced project"),
                                       bulletPoints=[BulletPoint(text="Unlimited projects", imageIdentifier=bullet_id, altText="Folder")])
    call("uploadMessage", lambda: client.upload_message(uuid.UUID(message_id), message) or "uploaded")
    call("uploadMessageAgain", lambda: client.upload_message(uuid.UUID(message_id), message))
    call("uploadMessageHeaderTooLong", lambda: raw("PUT", f"/inApps/v1/messaging/message/{uuid.uuid4()}", {"header": "h" * 67, "body": "b"}))
    call("uploadMessageBodyTooLong", lambda: raw("PUT", f"/inApps/v1/messaging/message/{uuid.uuid4()}", {"header": "h", "body": "b" * 145}))
    call("uploadMessageAltTextTooLong", lambda: raw("PUT", f"/inApps/v1/messaging/message/{uuid.uuid4()}",
                                                  {"header": "h", "body": "b", "image": {"imageIdentifier": str(image_id), "altText": "a" * 151}}))
    call("uploadMessageTooManyBulletPoints", lambda: raw("PUT", f"/inApps/v1/messaging/message/{uuid.uuid4()}",
                                                       {"header": "h", "body": "b", "bulletPoints": [
                                                           {"text": "t", "imageIdentifier": str(bullet_id), "altText": "a"}] * 6}))
    call("uploadMessageBulletTextTooLong", lambda: raw("PUT", f"/inApps/v1/messaging/message/{uuid.uuid4()}",
                                                     {"header": "h", "body": "b", "bulletPoints": [
                                                         {"text": "t" * 67, "imageIdentifier": str(bullet_id), "altText": "a"}]}))
    call("uploadMessageAboveImageWithoutImage", lambda: raw("PUT", f"/inApps/v1/messaging/message/{uuid.uuid4()}",
                                                          {"header": "h", "body": "b", "headerPosition": "ABOVE_IMAGE"}))
    def messages():
        return sorted([str(item.messageIdentifier), item.messageState.value] for item in client.get_message_list().messageIdentifiers or [])
    call("getMessageList", messages)

    # Default messages.
    call("configureDefaultMessage", lambda: client.configure_default_message(product, locale, DefaultConfigurationRequest(messageIdentifier=uuid.UUID(message_id))) or "configured")
    call("getDefaultMessage", lambda: str(client.get_default_message(product, locale).messageIdentifier))
    call("configureDefaultMessageInvalidLocale", lambda: client.configure_default_message(product, "english", DefaultConfigurationRequest(messageIdentifier=uuid.UUID(message_id))))
    call("configureDefaultMessageNotSubscription", lambda: client.configure_default_message(scenario["consumableProductId"], locale, DefaultConfigurationRequest(messageIdentifier=uuid.UUID(message_id))))
    call("configureDefaultMessageUnknownMessage", lambda: client.configure_default_message(product, locale, DefaultConfigurationRequest(messageIdentifier=uuid.uuid4())))
    call("getDefaultMessageUnknown", lambda: client.get_default_message(product, "fr-FR"))

    # The real-time URL and its performance test.
    call("getRealtimeUrlUnset", lambda: client.get_realtime_url())
    call("configureRealtimeUrlInvalid", lambda: client.configure_realtime_url(RealtimeUrlRequest(realtimeURL="ftp://example.com/x")))
    call("configureRealtimeUrl", lambda: client.configure_realtime_url(RealtimeUrlRequest(realtimeURL=realtime_url)) or "configured")
    call("getRealtimeUrl", lambda: client.get_realtime_url().realtimeURL == realtime_url)
    def performance_test():
        started = client.initiate_performance_test(PerformanceTestRequest(originalTransactionId=str(scenario["subscriptionOriginalId"])))
        deadline = time.monotonic() + 120
        result = client.get_performance_test_results(started.requestId)
        while result.result == PerformanceTestStatus.PENDING and time.monotonic() < deadline:
            time.sleep(0.1)
            result = client.get_performance_test_results(started.requestId)
        return {"result": result.result.value, "target": result.target, "totalRequests": result.config.totalRequests,
                "numPending": result.numPending, "successRate": result.successRate, "p50": result.responseTimes.p50,
                "failures": {str(k.value if hasattr(k, "value") else k): v for k, v in (result.failures or {}).items()}}
    call("initiatePerformanceTest", performance_test)
    call("initiatePerformanceTestNotOriginal", lambda: client.initiate_performance_test(PerformanceTestRequest(originalTransactionId=str(scenario["renewalId"]))))
    call("initiatePerformanceTestUnknown", lambda: client.initiate_performance_test(PerformanceTestRequest(originalTransactionId="999999999")))
    call("initiatePerformanceTestInvalid", lambda: client.initiate_performance_test(PerformanceTestRequest(originalTransactionId="abc")))
    call("getPerformanceTestResultsUnknown", lambda: client.get_performance_test_results(str(uuid.uuid4())))
    call("getPerformanceTestResultsInvalid", lambda: client.get_performance_test_results("not-a-request-id"))

    # Deleting, in the order the store allows.
    call("deleteImageInUse", lambda: client.delete_image(image_id))
    call("deleteImageUnused", lambda: client.delete_image(unused_id) or "deleted")
    call("deleteImageUnknown", lambda: client.delete_image(uuid.uuid4()))
    call("deleteDefaultMessage", lambda: client.delete_default_message(product, locale) or "deleted")
    call("getDefaultMessageDeleted", lambda: client.get_default_message(product, locale))
    call("deleteMessage", lambda: client.delete_message(uuid.UUID(message_id)) or "deleted")
    call("deleteMessageAgain", lambda: client.delete_message(uuid.UUID(message_id)))
    call("deleteImageFreed", lambda: client.delete_image(image_id) or "deleted")
    call("deleteRealtimeUrl", lambda: client.delete_realtime_url() or "deleted")
    call("getRealtimeUrlDeleted", lambda: client.get_realtime_url())
    call("getImageListAfter", images)

    endpoint.shutdown()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
