import Foundation

/// The "has pro" flag the app shares with its extensions through a file in a shared container.
///
/// The app writes it atomically whenever the subscription state changes; an extension (a widget,
/// another process) only reads it, and never needs StoreKit.
struct ProFlag: Codable, Equatable {
    var hasPro: Bool
    /// Why, in a few words, for the extension to show.
    var reason: String

    static func read(from url: URL) -> ProFlag? {
        try? JSONDecoder().decode(ProFlag.self, from: Data(contentsOf: url))
    }

    func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try encoder.encode(self).write(to: url, options: .atomic)
    }
}
