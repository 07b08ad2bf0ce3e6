import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization

extension URLSession {
    /// The body and response of a request, like `data(for:)`, except that cancelling the calling task
    /// returns `CancellationError` at once and leaves the transfer to finish on its own.
    ///
    /// FoundationNetworking on Linux can trap when an `async` data task is cancelled while it
    /// completes (its task registry loses the task); long polls are cancelled all the time, so every
    /// request of this package goes through here.
    ///
    /// The transfer reports to `transfers` (the session's delegate), never to a completion handler:
    /// FoundationNetworking follows every redirect of a task with a completion handler without asking
    /// its delegate, and this package follows none (see ``NoRedirectTransfers``).
    func detachedData(for request: URLRequest, transfers: NoRedirectTransfers) async throws -> (Data, URLResponse) {
        let slot = ResultSlot()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                guard slot.install(continuation) else { return }
                let task = dataTask(with: request)
                transfers.register(task) { data, response, error in
                    if let response, error == nil {
                        slot.finished(.success((data, response)))
                    } else {
                        slot.finished(.failure(error ?? URLError(.badServerResponse)))
                    }
                }
                slot.attach(task)
                task.resume()
            }
        } onCancel: {
            slot.resume(.failure(CancellationError()))
            // Stop the transfer too: a cancelled long poll must not keep holding a connection.
            slot.cancelTransfer()
        }
    }
}

/// A continuation resumed exactly once, by whichever of the transfer and the cancellation comes first.
private final class ResultSlot: Sendable {
    private enum State {
        case waiting
        case installed(CheckedContinuation<(Data, URLResponse), any Error>)
        case resolved(Result<(Data, URLResponse), any Error>?)
    }

    private let state = Mutex<State>(.waiting)
    private let transfer = Mutex<(task: URLSessionDataTask?, cancelled: Bool)>((nil, false))

    /// Remembers the transfer, cancelling it at once when the caller already gave up.
    func attach(_ task: URLSessionDataTask) {
        let cancelled = transfer.withLock { transfer -> Bool in
            transfer.task = task
            return transfer.cancelled
        }
        if cancelled { task.cancel() }
    }

    /// Cancels the transfer (now, or as soon as it is attached).
    func cancelTransfer() {
        let task = transfer.withLock { transfer -> URLSessionDataTask? in
            transfer.cancelled = true
            return transfer.task
        }
        task?.cancel()
    }

    /// Stores the continuation; returns false (having resumed it) when the outcome is already known.
    func install(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>) -> Bool {
        let early = state.withLock { state -> Result<(Data, URLResponse), any Error>? in
            switch state {
            case .waiting:
                state = .installed(continuation)
                return nil
            case .resolved(let result):
                state = .resolved(nil)
                return result ?? .failure(CancellationError())
            case .installed:
                return .failure(CancellationError())
            }
        }
        guard let early else { return true }
        continuation.resume(with: early)
        return false
    }

    /// The transfer ended: its outcome, and the task let go (it holds the handler that holds this slot).
    func finished(_ result: Result<(Data, URLResponse), any Error>) {
        resume(result)
        transfer.withLock { $0.task = nil }
    }

    func resume(_ result: Result<(Data, URLResponse), any Error>) {
        let continuation = state.withLock { state -> CheckedContinuation<(Data, URLResponse), any Error>? in
            switch state {
            case .waiting:
                state = .resolved(result)
                return nil
            case .installed(let continuation):
                state = .resolved(nil)
                return continuation
            case .resolved:
                return nil
            }
        }
        continuation?.resume(with: result)
    }
}

/// The session delegate of ``HTTPClient``: it collects each transfer's answer and follows no
/// redirect. Every request of the package carries credentials (a bearer token, a signed
/// notification, a customer's retention request) or fetches what a page shows, so a `3xx` is the
/// answer, never a reason to send the request, its `Authorization` header included, somewhere else
/// (a real-time URL that redirects past the https rule, an API URL that redirects to another host).
final class NoRedirectTransfers: NSObject, URLSessionDataDelegate, Sendable {
    typealias Completion = @Sendable (Data, URLResponse?, (any Error)?) -> Void
    private struct Transfer {
        var data = Data()
        var response: URLResponse?
        var completion: Completion
    }
    private let transfers = Mutex<[Int: Transfer]>([:])

    func register(_ task: URLSessionTask, completion: @escaping Completion) {
        transfers.withLock { $0[task.taskIdentifier] = Transfer(completion: completion) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse, newRequest request: URLRequest,
                    completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        transfers.withLock { $0[dataTask.taskIdentifier]?.response = response }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfers.withLock { $0[dataTask.taskIdentifier]?.data.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        guard let transfer = transfers.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        transfer.completion(transfer.data, transfer.response ?? task.response, error)
    }
}
