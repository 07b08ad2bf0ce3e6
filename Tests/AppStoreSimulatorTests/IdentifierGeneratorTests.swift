import AppStoreSimulator
import Foundation
import Testing

/// The store's random identifiers are well-formed version 4 UUIDs that do not repeat.
@Suite(.timeLimit(.minutes(10)))
struct IdentifierGeneratorTests {
    @Test("10,000 random identifiers: version 4, RFC 4122 variant, all distinct, every random hex digit varies")
    func randomIdentifiers() {
        let identifiers = (0..<10_000).map { _ in IdentifierGenerator.random().uuidString }
        #expect(Set(identifiers).count == identifiers.count)
        #expect(identifiers.allSatisfy { Array($0)[14] == "4" }, "version nibble")
        #expect(identifiers.allSatisfy { "89AB".contains(Array($0)[19]) }, "variant bits")
        for position in 0..<36 where ![8, 13, 14, 18, 23].contains(position) {
            let digits = Set(identifiers.map { Array($0)[position] })
            #expect(digits.count > (position == 19 ? 3 : 15), "position \(position) takes \(digits.count) values")
        }
    }

    @Test("the sequential generator counts, for output that tests compare")
    func sequentialIdentifiers() {
        let generator = IdentifierGenerator.sequential(startingAt: 255)
        #expect(generator().uuidString == "00000000-0000-0000-0000-0000000000FF")
        #expect(generator().uuidString == "00000000-0000-0000-0000-000000000100")
    }
}
