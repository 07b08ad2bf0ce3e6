/// A mistake in how a command was called: shown with the usage, exit status 64 (`EX_USAGE`).
public struct ValidationError: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// A command that ran and failed: `error: message` on standard error, exit status 1.
public struct CommandFailure: Error, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Exit statuses of the `storekit` tool.
public enum ExitStatus {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
}
