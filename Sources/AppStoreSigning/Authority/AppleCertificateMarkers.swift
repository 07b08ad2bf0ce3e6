/// The certificate extensions Apple's verifiers look for in the App Store signing chain.
///
/// Only their presence is checked, never their contents.
public enum AppleCertificateMarkers {
    /// Marks the leaf that signs App Store receipts and transactions.
    public static let receiptSigningLeafOID = "1.2.840.113635.100.6.11.1"
    /// Marks the Apple Worldwide Developer Relations intermediate authority.
    public static let worldwideDeveloperRelationsIntermediateOID = "1.2.840.113635.100.6.2.1"
}
