import AppStoreModels
import Foundation
import StoreKitCatalog
import Testing
import TestSupport

/// Mutates real `.storekit` files and checks the reader never crashes or hangs, and that every
/// failure is a validation error with at least one located problem.
@Suite(.timeLimit(.minutes(10)), .enabled(if: SharedTestData.isAvailable, SharedTestData.skipReason))
struct ConfigurationMutationTests {
    /// Cases per run; `OPENSTOREKIT_MUTATION_CASES` overrides it for longer local runs.
    static let caseCount = ProcessInfo.processInfo.environment["OPENSTOREKIT_MUTATION_CASES"].flatMap(Int.init) ?? 100_000

    static let replacements: [JSONValue] = [
        .null, .bool(true), .bool(false), .integer(0), .integer(-1), .integer(Int64.max), .number(1e308), .number(-0.5),
        .string(""), .string("P1X"), .string("P0M"), .string("1,99"), .string("-1"), .string("NonRenewingSubscription"),
        .string("RecurringSubscription"), .string("payAsYouGo"), .string("\u{0000}\u{FFFF}"), .array([]), .object([:]),
        .array([.null, .object(["productID": .string("x")])]), .object(["major": .string("9")]),
    ]

    /// The JSON value at a random place in `tree`, replaced by `transform`.
    static func mutate(_ tree: JSONValue, depth: Int = 0, using random: inout SplitMix64,
                       _ transform: (JSONValue, inout SplitMix64) -> JSONValue?) -> JSONValue? {
        let descend = depth < 12 && Int.random(in: 0..<4, using: &random) != 0
        switch tree {
        case .object(var members) where descend && !members.isEmpty:
            let key = members.keys.sorted()[Int.random(in: 0..<members.count, using: &random)]
            members[key] = mutate(members[key]!, depth: depth + 1, using: &random, transform)
            return .object(members)
        case .array(var elements) where descend && !elements.isEmpty:
            let index = Int.random(in: 0..<elements.count, using: &random)
            if let replaced = mutate(elements[index], depth: depth + 1, using: &random, transform) {
                elements[index] = replaced
            } else {
                elements.remove(at: index)
            }
            return .array(elements)
        default:
            return transform(tree, &random)
        }
    }

    static func mutatedCase(from original: Data, tree: JSONValue, using random: inout SplitMix64) -> Data {
        var bytes = [UInt8](original)
        switch Int.random(in: 0..<8, using: &random) {
        case 0: // flip a byte
            let index = Int.random(in: 0..<bytes.count, using: &random)
            bytes[index] ^= UInt8.random(in: 1...255, using: &random)
        case 1: // truncate
            bytes.removeLast(Int.random(in: 1...bytes.count, using: &random))
        case 2: // delete a range
            let start = Int.random(in: 0..<bytes.count, using: &random)
            bytes.removeSubrange(start..<min(bytes.count, start + Int.random(in: 1...64, using: &random)))
        case 3: // insert structural characters
            let noise = Array("{}[],:\"\\0123456789.-eE truefalsenull".utf8)
            let insertion = (0..<Int.random(in: 1...8, using: &random)).map { _ in noise.randomElement(using: &random)! }
            bytes.insert(contentsOf: insertion, at: Int.random(in: 0...bytes.count, using: &random))
        case 4: // duplicate a range
            let start = Int.random(in: 0..<bytes.count, using: &random)
            let slice = bytes[start..<min(bytes.count, start + Int.random(in: 1...200, using: &random))]
            bytes.insert(contentsOf: slice, at: Int.random(in: 0...bytes.count, using: &random))
        case 5: // replace a value somewhere in the tree
            let mutated = mutate(tree, using: &random) { _, random in replacements.randomElement(using: &random)! }
            return (try? JSONEncoder().encode(mutated ?? .null)) ?? Data()
        case 6: // delete a value somewhere in the tree
            let mutated = mutate(tree, using: &random) { _, _ in nil }
            return (try? JSONEncoder().encode(mutated ?? .null)) ?? Data()
        default: // nest deeply
            let depth = Int.random(in: 1...2_000, using: &random)
            return Data(String(repeating: "[", count: depth).utf8) + original + Data(String(repeating: "]", count: depth).utf8)
        }
        return Data(bytes)
    }

    @Test("100,000 mutations of the real files: no crash, no hang, every failure a located validation error")
    func mutations() async throws {
        let files = SharedTestData.files(in: "storekit-files", withExtension: "storekit")
        let originals = try files.map { try Data(contentsOf: $0) }
        let trees = try originals.map { try JSONDecoder().decode(JSONValue.self, from: $0) }
        let names = files.map(\.lastPathComponent)
        let (accepted, rejected, unlocated) = try await onThreadOfItsOwn { () -> (Int, Int, [String]) in
            var random = SplitMix64(state: 0x5EED_CAFE)
            var accepted = 0
            var rejected = 0
            var unlocated: [String] = []
            for caseNumber in 0..<Self.caseCount {
                let which = caseNumber % originals.count
                let input = Self.mutatedCase(from: originals[which], tree: trees[which], using: &random)
                do throws(ConfigurationError) {
                    let result = try StoreKitConfiguration.read(input, fileName: names[which])
                    let catalog = Catalog(configuration: result.configuration)
                    _ = catalog.products.map(\.displayPrice)
                    accepted += 1
                } catch {
                    rejected += 1
                    if error.problems.isEmpty || error.problems.contains(where: { $0.message.isEmpty }) {
                        unlocated.append("case \(caseNumber) of \(names[which]) failed without a located problem: \(error)")
                    }
                }
            }
            return (accepted, rejected, unlocated)
        }
        #expect(unlocated.isEmpty, "\(unlocated.count) failures without a located problem, first: \(unlocated.prefix(3))")
        #expect(accepted + rejected == Self.caseCount)
        #expect(accepted > 0 && rejected > 0)
        print("mutation cases: \(accepted) accepted, \(rejected) rejected with validation errors")
    }
}
