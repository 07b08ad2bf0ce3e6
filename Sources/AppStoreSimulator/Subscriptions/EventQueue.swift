import Foundation

/// A min-heap of (due date, original transaction ID): the subscriptions' next lifecycle events.
///
/// Entries are not removed when a subscription changes; a popped entry is used only if it still
/// matches the subscription's ``SubscriptionRecord/nextEventDate`` (lazy deletion), which keeps every
/// update O(log n).
struct EventQueue: Sendable {
    private var heap: [(date: Date, id: UInt64)] = []

    var isEmpty: Bool { heap.isEmpty }

    var first: (date: Date, id: UInt64)? { heap.first }

    mutating func push(_ date: Date, _ id: UInt64) {
        heap.append((date, id))
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard Self.less(heap[child], heap[parent]) else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    mutating func pop() -> (date: Date, id: UInt64)? {
        guard !heap.isEmpty else { return nil }
        heap.swapAt(0, heap.count - 1)
        let top = heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count, Self.less(heap[left], heap[smallest]) { smallest = left }
            if right < heap.count, Self.less(heap[right], heap[smallest]) { smallest = right }
            guard smallest != parent else { break }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
        return top
    }

    private static func less(_ lhs: (date: Date, id: UInt64), _ rhs: (date: Date, id: UInt64)) -> Bool {
        (lhs.date, lhs.id) < (rhs.date, rhs.id)
    }
}
