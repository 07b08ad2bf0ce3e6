import Foundation

/// Iterates one channel of a device's feed as values of `Element`: binds to the active client when
/// first asked (waiting for one to be set, as every StoreKit sequence does), listens to the client's
/// shared broadcast of the channel, and turns each batch into elements.
struct ClientFeedIterator<Element: Sendable>: Sendable {
    private var bound: StoreClient?
    private let channel: TransportUpdate.Channel
    private let transform: @Sendable (StoreClient, [TransportUpdate]) async -> [Element]
    private var buffer: [Element] = []
    private var position = 0
    /// This listener's copy of the client's shared feed.
    private var feed: FeedListener?

    /// - Parameter client: The client to read from; `nil` for a static sequence, which binds when iterated.
    init(client: StoreClient?, channel: TransportUpdate.Channel,
         transform: @escaping @Sendable (StoreClient, [TransportUpdate]) async -> [Element]) {
        self.bound = client
        self.channel = channel
        self.transform = transform
    }

    mutating func next() async -> Element? {
        if bound == nil {
            guard let client = await StoreClient.awaitingActive() else { return nil }
            bound = client
        }
        guard let client = bound else { return nil }
        while position == buffer.count {
            guard !Task.isCancelled else { return nil }
            position = 0
            if feed == nil { feed = client.feed(channel).listen() }
            guard let updates = await feed?.next() else { return nil }
            buffer = await transform(client, updates)
        }
        defer { position += 1 }
        return buffer[position]
    }
}
