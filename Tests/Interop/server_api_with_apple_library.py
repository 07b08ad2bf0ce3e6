#!/usr/bin/env python3
"""Calls every App Store Server API endpoint of a local store with Apple's own AppStoreServerAPIClient
(PyPI app-store-server-library), only its base URL pointed at the store, and verifies every signed item
it receives with Apple's SignedDataVerifier configured with the store's root, offline and with online checks.

Usage: server_api_with_apple_library.py BASE_URL KEY_JSON ROOT_DER BUNDLE_ID ENVIRONMENT SCENARIO_JSON

SCENARIO_JSON names what the store holds: {"anyTransactionId", "subscriptionOriginalId", "subscriptionProductId",
"orderId", "consumableId", "refundedId"}. Prints one JSON object: each call's outcome, the number of signed items
verified, and the failures.
"""
import json
import sys
import uuid

from appstoreserverlibrary.api_client import AppStoreServerAPIClient, APIException, GetTransactionHistoryVersion
from appstoreserverlibrary.models.AccountTenure import AccountTenure
from appstoreserverlibrary.models.ConsumptionRequest import ConsumptionRequest
from appstoreserverlibrary.models.ConsumptionRequestV1 import ConsumptionRequestV1
from appstoreserverlibrary.models.ConsumptionStatus import ConsumptionStatus
from appstoreserverlibrary.models.DeliveryStatus import DeliveryStatus
from appstoreserverlibrary.models.DeliveryStatusV1 import DeliveryStatusV1
from appstoreserverlibrary.models.Environment import Environment
from appstoreserverlibrary.models.ExtendReasonCode import ExtendReasonCode
from appstoreserverlibrary.models.ExtendRenewalDateRequest import ExtendRenewalDateRequest
from appstoreserverlibrary.models.LifetimeDollarsPurchased import LifetimeDollarsPurchased
from appstoreserverlibrary.models.LifetimeDollarsRefunded import LifetimeDollarsRefunded
from appstoreserverlibrary.models.MassExtendRenewalDateRequest import MassExtendRenewalDateRequest
from appstoreserverlibrary.models.NotificationHistoryRequest import NotificationHistoryRequest
from appstoreserverlibrary.models.Platform import Platform
from appstoreserverlibrary.models.PlayTime import PlayTime
from appstoreserverlibrary.models.RefundPreferenceV1 import RefundPreferenceV1
from appstoreserverlibrary.models.Status import Status
from appstoreserverlibrary.models.TransactionHistoryRequest import TransactionHistoryRequest, Order, ProductType
from appstoreserverlibrary.models.UpdateAppAccountTokenRequest import UpdateAppAccountTokenRequest
from appstoreserverlibrary.models.UserStatus import UserStatus
from appstoreserverlibrary.signed_data_verifier import SignedDataVerifier


def main() -> int:
    base_url, key_path, root_path, bundle_id, environment, scenario_path = sys.argv[1:7]
    key = json.load(open(key_path))
    scenario = json.load(open(scenario_path))
    client = AppStoreServerAPIClient(key["privateKey"].encode(), key["keyId"], key["issuerId"], bundle_id, Environment(environment))
    client._base_url = base_url
    root = open(root_path, "rb").read()
    # Every item is verified twice: offline, and with online checks (OCSP to the store's responder).
    verifiers = [SignedDataVerifier([root], online, Environment(environment), bundle_id, None) for online in (False, True)]
    report = {"calls": {}, "verified": 0, "failures": []}

    def verified(kind, jws):
        decoded = None
        for verifier in verifiers:
            method = {"transaction": verifier.verify_and_decode_signed_transaction, "renewal": verifier.verify_and_decode_renewal_info,
                      "notification": verifier.verify_and_decode_notification, "app": verifier.verify_and_decode_app_transaction}[kind]
            try:
                decoded = method(jws)
                report["verified"] += 1
            except Exception as error:  # noqa: BLE001 - every failure is reported
                report["failures"].append(f"{kind} (online checks {verifier is verifiers[1]}): {error!r}")
                return None
        return decoded

    def call(name, body):
        try:
            report["calls"][name] = body()
        except APIException as error:
            report["calls"][name] = {"status": error.http_status_code, "errorCode": error.raw_api_error}
        except Exception as error:  # noqa: BLE001
            report["calls"][name] = {"exception": repr(error)}
            report["failures"].append(f"{name}: {error!r}")

    any_id = str(scenario["anyTransactionId"])

    def transaction_info():
        info = client.get_transaction_info(any_id)
        return verified("transaction", info.signedTransactionInfo).productId

    def history(version, request):
        def run():
            revision, ids, pages = None, [], 0
            while True:
                page = client.get_transaction_history(any_id, revision, request, version)
                pages += 1
                for jws in page.signedTransactions:
                    decoded = verified("transaction", jws)
                    if decoded:
                        ids.append(decoded.transactionId)
                revision = page.revision
                if not page.hasMore:
                    break
            return {"count": len(ids), "pages": pages, "unique": len(set(ids)), "first": ids[:1], "last": ids[-1:]}
        return run

    def statuses():
        response = client.get_all_subscription_statuses(any_id, [Status.ACTIVE])
        items = [item for group in response.data for item in group.lastTransactions]
        for item in items:
            verified("transaction", item.signedTransactionInfo)
            verified("renewal", item.signedRenewalInfo)
        return {"groups": len(response.data), "active": len(items)}

    def refunds():
        revision, count = None, 0
        while True:
            page = client.get_refund_history(any_id, revision)
            for jws in page.signedTransactions:
                verified("transaction", jws)
                count += 1
            revision = page.revision
            if not page.hasMore:
                break
        return count

    def order(order_id):
        def run():
            response = client.look_up_order_id(order_id)
            for jws in response.signedTransactions or []:
                verified("transaction", jws)
            return {"status": response.status, "count": len(response.signedTransactions or [])}
        return run

    def extend():
        response = client.extend_subscription_renewal_date(str(scenario["subscriptionOriginalId"]),
                                                           ExtendRenewalDateRequest(extendByDays=7, extendReasonCode=ExtendReasonCode.CUSTOMER_SATISFACTION,
                                                                                    requestIdentifier=str(uuid.uuid4())))
        return {"success": response.success, "effectiveDate": response.effectiveDate}

    def mass_extend():
        identifier = str(uuid.uuid4())
        client.extend_renewal_date_for_all_active_subscribers(MassExtendRenewalDateRequest(
            extendByDays=3, extendReasonCode=ExtendReasonCode.OTHER, requestIdentifier=identifier, productId=scenario["subscriptionProductId"]))
        status = client.get_status_of_subscription_renewal_date_extensions(identifier, scenario["subscriptionProductId"])
        return {"complete": status.complete, "succeeded": status.succeededCount, "failed": status.failedCount}

    def consumption_v1():
        client.send_consumption_data(str(scenario["consumableId"]), ConsumptionRequestV1(
            customerConsented=True, consumptionStatus=ConsumptionStatus.NOT_CONSUMED, platform=Platform.APPLE, sampleContentProvided=False,
            deliveryStatus=DeliveryStatusV1.DELIVERED_AND_WORKING_PROPERLY, appAccountToken="", accountTenure=AccountTenure.THREE_DAYS_TO_TEN_DAYS,
            playTime=PlayTime.FIVE_TO_SIXTY_MINUTES, lifetimeDollarsRefunded=LifetimeDollarsRefunded.ZERO_DOLLARS,
            lifetimeDollarsPurchased=LifetimeDollarsPurchased.ZERO_DOLLARS, userStatus=UserStatus.ACTIVE,
            refundPreference=RefundPreferenceV1.PREFER_DECLINE))
        return "accepted"

    def consumption_v2():
        client.send_consumption_information(str(scenario["consumableId"]), ConsumptionRequest(
            customerConsented=True, sampleContentProvided=True, deliveryStatus=DeliveryStatus.DELIVERED, consumptionPercentage=25000))
        return "accepted"

    def app_account_token():
        client.set_app_account_token(str(scenario["subscriptionOriginalId"]), UpdateAppAccountTokenRequest(appAccountToken=str(uuid.uuid4())))
        return "set"

    def app_transaction():
        response = client.get_app_transaction_info(any_id)
        decoded = verified("app", response.signedAppTransactionInfo)
        return decoded.bundleId if decoded else None

    def finish():
        client.finish_transaction(str(scenario["consumableId"]))
        return "finished"

    def test_notification():
        token = client.request_test_notification().testNotificationToken
        status = client.get_test_notification_status(token)
        decoded = verified("notification", status.signedPayload)
        return {"type": str(decoded.notificationType.value) if decoded else None, "attempts": len(status.sendAttempts or [])}

    def notification_history():
        request = NotificationHistoryRequest(startDate=scenario["historyStart"], endDate=scenario["historyEnd"])
        token, count, pages = None, 0, 0
        while True:
            page = client.get_notification_history(token, request)
            pages += 1
            for item in page.notificationHistory:
                verified("notification", item.signedPayload)
                count += 1
            token = page.paginationToken
            if not page.hasMore:
                break
        return {"count": count, "pages": pages}

    call("getTransactionInfo", transaction_info)
    call("getTransactionHistoryV2", history(GetTransactionHistoryVersion.V2, TransactionHistoryRequest(sort=Order.ASCENDING, revoked=False)))
    call("getTransactionHistoryV1", history(GetTransactionHistoryVersion.V1, TransactionHistoryRequest()))
    call("getTransactionHistoryConsumablesDescending", history(GetTransactionHistoryVersion.V2, TransactionHistoryRequest(
        sort=Order.DESCENDING, productTypes=[ProductType.CONSUMABLE])))
    call("getAllSubscriptionStatuses", statuses)
    call("getRefundHistory", refunds)
    call("lookUpOrderId", order(scenario["orderId"]))
    call("lookUpOrderIdInvalid", order("MZZZZZZZZZ"))
    call("extendSubscriptionRenewalDate", extend)
    call("extendRenewalDateForAllActiveSubscribers", mass_extend)
    call("sendConsumptionData", consumption_v1)
    call("sendConsumptionInformation", consumption_v2)
    call("setAppAccountToken", app_account_token)
    call("getAppTransactionInfo", app_transaction)
    call("finishTransaction", finish)
    call("requestTestNotification", test_notification)
    call("getNotificationHistory", notification_history)
    call("getTransactionInfoUnknown", lambda: client.get_transaction_info("9999999"))
    print(json.dumps(report, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
