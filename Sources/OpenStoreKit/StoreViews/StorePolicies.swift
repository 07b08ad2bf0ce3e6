import Foundation

/// The terms of service and privacy policy a store view links to beside its plans (`.policies`).
///
/// An app gives its own (`.subscriptionStorePolicyDestination(url:for:)`); without them the store's
/// come from the `.storekit` file's `appPolicies`: its EULA text (Apple's standard EULA when empty)
/// and the privacy policy for the storefront's locale.
public struct StorePolicies: Hashable, Sendable {
    /// Where the terms of service are; Apple's standard EULA when the file has none of its own.
    public var termsOfServiceURL: URL?
    /// The terms' own text, when the file carries one instead of a link.
    public var termsOfServiceText: String?
    public var privacyPolicyURL: URL?
    public var privacyPolicyText: String?

    /// Apple's standard licensed application end user license agreement.
    public static let standardEULA = URL(string: "https://www.apple.com/legal/internet-services/itunes/dev/stdeula/")!

    public init(termsOfServiceURL: URL? = nil, termsOfServiceText: String? = nil, privacyPolicyURL: URL? = nil,
                privacyPolicyText: String? = nil) {
        self.termsOfServiceURL = termsOfServiceURL
        self.termsOfServiceText = termsOfServiceText
        self.privacyPolicyURL = privacyPolicyURL
        self.privacyPolicyText = privacyPolicyText
    }
}

extension StoreClient {
    /// The store's policies as its `.storekit` file gives them; Apple's standard EULA and no privacy
    /// policy when the store cannot say.
    public func storePolicies() async -> StorePolicies {
        do {
            return try await transport.storePolicies(device: device)
        } catch {
            StoreDiagnostics.report("the store's policies are unknown: \(error)")
            return StorePolicies(termsOfServiceURL: StorePolicies.standardEULA)
        }
    }
}
