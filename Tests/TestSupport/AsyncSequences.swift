import Foundation

/// The first element of a sequence, or a failure once `limit` passes (a deadline for a broken test,
/// not a timing: a healthy wait ends as soon as the element arrives).
public func firstElement<S: AsyncSequence & Sendable>(of sequence: S, within limit: Duration = .seconds(120)) async throws -> S.Element
where S.Element: Sendable {
    try await withThrowingTaskGroup(of: S.Element?.self) { group in
        group.addTask {
            for try await element in sequence { return element }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let element = first else {
            throw TestFailure("no element arrived within \(limit)")
        }
        return element
    }
}

/// Everything a finite sequence yields.
public func collect<S: AsyncSequence>(_ sequence: S) async throws -> [S.Element] {
    var elements: [S.Element] = []
    for try await element in sequence { elements.append(element) }
    return elements
}
