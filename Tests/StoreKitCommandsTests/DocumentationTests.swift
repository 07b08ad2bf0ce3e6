import Foundation
import StoreKitBenchmarks
import StoreKitCommands
import TestSupport
import Testing

/// The documents a newcomer reads first say what the package holds: README.md stays short, and the
/// module lists, the module graph and the command table name what `Package.swift` and the command
/// tree hold, no more and no less. Each failure says which document to fix and how.
@Suite(.timeLimit(.minutes(1)))
struct DocumentationTests {
    static let readmeLineLimit = 250

    // MARK: README.md

    @Test("README.md is at most 250 lines")
    func readmeIsShort() throws {
        let readme = try MarkdownDocument(relativePath: "README.md")
        #expect(readme.lines.count <= Self.readmeLineLimit, """
            README.md has \(readme.lines.count) lines; keep it to \(Self.readmeLineLimit) (what it is, the two commands, a short \
            tour, where to go next) and move longer material to docs/tour.md or another page under docs/
            """)
    }

    @Test("README.md's Commands table names every command of the tree, and only those")
    func readmeCommandsMatchTheTree() throws {
        let tree = (StoreKitCommand.commands + Benchmarks.commands).map { $0.name }
        let readme = try MarkdownDocument(relativePath: "README.md")
        let table = try #require(readme.section("## Commands"), "README.md has no \"## Commands\" section; add one with the table of commands")
        let listed = MarkdownDocument.declaredNames(in: table)
        #expect(!listed.isEmpty, "README.md's Commands section has no table whose first column lists commands in backticks")
        for name in tree where !listed.contains(name) {
            Issue.record("README.md's Commands table does not list `\(name)`: add it, in backticks, to the first column of the row for its group")
        }
        for name in Set(listed) where !tree.contains(name) {
            Issue.record("README.md's Commands table lists `\(name)`, which is no command of the tree (StoreKitCommand.commands + Benchmarks.commands): remove it or write the command's full name")
        }
        for name in MarkdownDocument.repeated(listed) {
            Issue.record("README.md's Commands table lists `\(name)` more than once: keep one")
        }
    }

    @Test("README.md's Modules list names every module of Package.swift, and only those")
    func readmeModulesMatchThePackage() throws {
        let modules = try PackageManifest.load().modules.map(\.name)
        let readme = try MarkdownDocument(relativePath: "README.md")
        let section = try #require(readme.section("## Modules"), "README.md has no \"## Modules\" section; add one listing the package's modules")
        Self.compare(MarkdownDocument.declaredNames(in: section), with: modules,
                     document: "README.md's Modules list", howToAdd: "add a line \"- `NAME`: what it holds\"")
    }

    // MARK: ARCHITECTURE.md

    @Test("ARCHITECTURE.md's module table names every module of Package.swift, and only those")
    func architectureModulesMatchThePackage() throws {
        let modules = try PackageManifest.load().modules.map(\.name)
        let architecture = try MarkdownDocument(relativePath: "ARCHITECTURE.md")
        let section = try #require(architecture.section("## Modules"), "ARCHITECTURE.md has no \"## Modules\" section; add the table of modules")
        Self.compare(MarkdownDocument.declaredNames(in: section), with: modules,
                     document: "ARCHITECTURE.md's module table", howToAdd: "add a row \"| `NAME` | what it holds |\"")
    }

    @Test("ARCHITECTURE.md's module graph lists each module's dependencies as Package.swift declares them")
    func architectureGraphMatchesThePackage() throws {
        let modules = try PackageManifest.load().modules
        let architecture = try MarkdownDocument(relativePath: "ARCHITECTURE.md")
        let section = try #require(architecture.section("## Module graph"), "ARCHITECTURE.md has no \"## Module graph\" section; add one")
        let graph = ModuleGraphText(section)
        for name in MarkdownDocument.repeated(graph.dependencies.map(\.module)) {
            Issue.record("ARCHITECTURE.md's module graph has two lines for \(name): keep one")
        }
        let described = Dictionary(graph.dependencies.map { ($0.module, $0.dependencies) }, uniquingKeysWith: { first, _ in first })
        for module in modules {
            guard let dependencies = described[module.name] else {
                let line = module.dependencies.isEmpty ? "—" : module.dependencies.joined(separator: ", ")
                Issue.record("ARCHITECTURE.md's module graph has no line for \(module.name): add \"\(module.name) → \(line)\" as Package.swift declares it")
                continue
            }
            if Set(dependencies) != Set(module.dependencies) {
                Issue.record("""
                    ARCHITECTURE.md's module graph says \(module.name) → \(dependencies.joined(separator: ", ")), but Package.swift \
                    declares \(module.dependencies.isEmpty ? "none" : module.dependencies.joined(separator: ", ")): copy Package.swift's list
                    """)
            }
        }
        let names = Set(modules.map(\.name))
        for name in Set(described.keys) where !names.contains(name) {
            Issue.record("ARCHITECTURE.md's module graph has a line for \(name), which is no module of Package.swift: remove it or fix its name")
        }
    }

    @Test("ARCHITECTURE.md's layers put each module once, above everything it depends on")
    func architectureLayersFollowTheDependencies() throws {
        let modules = try PackageManifest.load().modules
        let architecture = try MarkdownDocument(relativePath: "ARCHITECTURE.md")
        let section = try #require(architecture.section("## Module graph"), "ARCHITECTURE.md has no \"## Module graph\" section; add one")
        let layers = ModuleGraphText(section).layers
        #expect(!layers.isEmpty, "ARCHITECTURE.md's module graph has no layers (lines \"N  Module · Module\", N from 0 at the bottom)")
        var layerOf: [String: Int] = [:]
        for layer in layers {
            for name in layer.modules {
                if layerOf[name] != nil {
                    Issue.record("ARCHITECTURE.md's layers name \(name) twice: keep it in one row")
                }
                layerOf[name] = layer.level
            }
        }
        let names = Set(modules.map(\.name))
        for name in Set(layerOf.keys) where !names.contains(name) {
            Issue.record("ARCHITECTURE.md's layers name \(name), which is no module of Package.swift: remove it or fix its name")
        }
        for module in modules {
            guard let level = layerOf[module.name] else {
                Issue.record("ARCHITECTURE.md's layers do not place \(module.name): add it to the lowest row above everything it depends on")
                continue
            }
            for dependency in module.dependencies {
                guard let below = layerOf[dependency] else { continue }
                if below >= level {
                    Issue.record("""
                        ARCHITECTURE.md's layers put \(module.name) in row \(level) and its dependency \(dependency) in row \(below): \
                        a module's row must be above all its dependencies' rows
                        """)
                }
            }
        }
    }

    @Test("ARCHITECTURE.md and docs/tour.md name every example app of Package.swift")
    func examplesAreNamed() throws {
        let examples = try PackageManifest.load().examples.map(\.name)
        #expect(!examples.isEmpty, "Package.swift declares no executable under Examples/; this test reads `path: \"Examples/…\"`")
        let architecture = try MarkdownDocument(relativePath: "ARCHITECTURE.md")
        let section = try #require(architecture.section("## Examples"), "ARCHITECTURE.md has no \"## Examples\" section; add one")
        let named = Set(section.flatMap { MarkdownDocument.codeSpans(in: $0.text) })
        for name in examples where !named.contains(name) {
            Issue.record("ARCHITECTURE.md's Examples section does not name `\(name)`: add it (and check the number of example apps it states)")
        }
        let tour = try MarkdownDocument(relativePath: "docs/tour.md")
        let toured = Set(tour.lines.flatMap { MarkdownDocument.codeSpans(in: $0) })
        for name in examples where !toured.contains(name) {
            Issue.record("docs/tour.md does not name the example app `\(name)`: add a row for it to the table of example apps")
        }
    }

    // MARK: Sources

    @Test("no module under Sources/ but the test kit itself imports OpenStoreKitTesting")
    func shippedModulesDoNotImportTheTestKit() throws {
        let sources = SharedTestData.packageRoot.appendingPathComponent("Sources")
        let allowed = ["OpenStoreKitTesting/"]
        let files = try #require(FileManager.default.subpaths(atPath: sources.path), "cannot list \(sources.path)")
        var checked = 0
        for file in files.sorted() where file.hasSuffix(".swift") && !allowed.contains(where: { file.hasPrefix($0) }) {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            checked += 1
            for (index, line) in text.components(separatedBy: "\n").enumerated() where Self.importedModule(line) == "OpenStoreKitTesting" {
                Issue.record("""
                    Sources/\(file):\(index + 1) (\(line.trimmingCharacters(in: .whitespaces))) imports the test kit, which a \
                    shipped module must not link: move what it needs into SimulatorConnection (or another module below \
                    both) and import that
                    """)
            }
        }
        #expect(checked > 0, "found no Swift file under \(sources.path)")
    }

    @Test("only test targets depend on OpenStoreKitTesting: no library, executable, example app or fixture does, directly or through another target")
    func onlyTestTargetsDependOnTheTestKit() throws {
        let manifest = try PackageManifest.load()
        let byName = Dictionary(manifest.targets.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byName["OpenStoreKitTesting"] != nil, "Package.swift declares no OpenStoreKitTesting target; this test reads its target calls")
        for target in manifest.targets where target.kind != "testTarget" && target.name != "OpenStoreKitTesting" && target.path != "Tests/TestSupport" {
            // Walk the dependencies breadth first, keeping the path that reached each target, to name it.
            var reached: [String: [String]] = [target.name: [target.name]]
            var queue = [target.name]
            while !queue.isEmpty {
                let name = queue.removeFirst()
                for dependency in byName[name]?.dependencies ?? [] where reached[dependency] == nil {
                    reached[dependency] = reached[name]! + [dependency]
                    queue.append(dependency)
                }
            }
            if let path = reached["OpenStoreKitTesting"] {
                Issue.record("""
                    \(target.name) links the test kit (\(path.joined(separator: " → "))): depend on LocalAppStore, which holds \
                    the local store and its controls, and keep OpenStoreKitTesting for test targets
                    """)
            }
        }
    }

    /// The module an `import` line imports (`import OpenStoreKitTesting`, `@_exported import
    /// struct OpenStoreKitTesting.SKTestError`), or `nil` for any other line.
    static func importedModule(_ line: String) -> String? {
        let modifiers: Set<String> = ["public", "package", "internal", "fileprivate", "private"]
        let kinds: Set<String> = ["struct", "class", "enum", "protocol", "typealias", "func", "let", "var", "actor"]
        var words = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        while let first = words.first, first.hasPrefix("@") || modifiers.contains(first) { words.removeFirst() }
        guard words.first == "import", words.count >= 2 else { return nil }
        words.removeFirst()
        if let kind = words.first, kinds.contains(kind), words.count >= 2 { words.removeFirst() }
        return words.first?.split(separator: ".").first.map(String.init)
    }

    /// Records what a document's list misses and what it names that is not a module.
    static func compare(_ listed: [String], with modules: [String], document: String, howToAdd: String) {
        #expect(!listed.isEmpty, "\(document) names no module: list them in backticks, one table row or list item each")
        for name in modules where !listed.contains(name) {
            Issue.record("\(document) does not name the module `\(name)` of Package.swift: \(howToAdd)")
        }
        for name in Set(listed) where !modules.contains(name) {
            Issue.record("\(document) names `\(name)`, which is no module of Package.swift: remove it or fix its name")
        }
        for name in MarkdownDocument.repeated(listed) {
            Issue.record("\(document) names `\(name)` more than once: keep one")
        }
    }
}

/// A Markdown file of the package, read as lines.
struct MarkdownDocument {
    /// A line of a section, and whether it is inside a code block.
    struct Line {
        let text: String
        let isFenced: Bool
    }

    let lines: [String]

    init(relativePath: String) throws {
        let text = try String(contentsOf: SharedTestData.packageRoot.appendingPathComponent(relativePath), encoding: .utf8)
        var lines = text.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        self.lines = lines
    }

    /// The lines under `heading` (such as `## Modules`, matched whole) up to the next heading of the
    /// same level or a higher one, without the code fences' own lines; `nil` when there is no such heading.
    func section(_ heading: String) -> [Line]? {
        let level = Self.headingLevel(heading) ?? 0
        var collected: [Line]?
        var inFence = false
        for line in lines {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                inFence.toggle()
                continue
            }
            if !inFence, let found = Self.headingLevel(line) {
                if collected != nil, found <= level { break }
                if line == heading {
                    collected = []
                    continue
                }
            }
            collected?.append(Line(text: line, isFenced: inFence))
        }
        return collected
    }

    /// How many `#` start a heading line (`## Modules` is 2); `nil` for a line that is not a heading.
    static func headingLevel(_ line: String) -> Int? {
        let hashes = line.prefix { $0 == "#" }.count
        guard hashes > 0, line.dropFirst(hashes).first == " " else { return nil }
        return hashes
    }

    /// The text of each code span of a line (between single backticks).
    static func codeSpans(in line: String) -> [String] {
        let parts = line.components(separatedBy: "`")
        return stride(from: 1, to: parts.count, by: 2).map { parts[$0] }
    }

    /// The names a section declares, outside code blocks: the code spans of the first cell of each
    /// table row, and of each list item before its first `: ` (`` - `A`, `B`: what they are ``).
    static func declaredNames(in section: [Line]) -> [String] {
        var names: [String] = []
        for line in section where !line.isFenced {
            let text = line.text.trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("|") {
                let cells = text.components(separatedBy: "|")
                if cells.count > 1 { names += codeSpans(in: cells[1]) }
            } else if text.hasPrefix("- "), let declared = text.components(separatedBy: ": ").first, declared != text {
                names += codeSpans(in: declared)
            }
        }
        return names
    }

    /// The names that occur more than once, each once.
    static func repeated(_ names: [String]) -> [String] {
        var seen: Set<String> = []
        var repeated: [String] = []
        for name in names where !seen.insert(name).inserted && !repeated.contains(name) {
            repeated.append(name)
        }
        return repeated
    }
}

/// ARCHITECTURE.md's module graph, as its code blocks write it: layers (`3  AppStoreBackend · …`, the
/// lowest row 0) and each module's direct dependencies (`AppStoreBackend → AppStoreModels, …`, `—` for none).
struct ModuleGraphText {
    struct Layer {
        let level: Int
        let modules: [String]
    }

    struct Dependencies {
        let module: String
        let dependencies: [String]
    }

    private(set) var layers: [Layer] = []
    private(set) var dependencies: [Dependencies] = []

    init(_ section: [MarkdownDocument.Line]) {
        for line in section where line.isFenced {
            let text = line.text.trimmingCharacters(in: .whitespaces)
            if text.contains("→") {
                let sides = text.components(separatedBy: "→")
                let module = sides[0].trimmingCharacters(in: .whitespaces)
                let right = sides.dropFirst().joined(separator: "→").trimmingCharacters(in: .whitespaces)
                let names = right == "—" ? [] : right.components(separatedBy: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                dependencies.append(Dependencies(module: module, dependencies: names))
                continue
            }
            let digits = text.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let level = Int(digits), text.dropFirst(digits.count).first?.isWhitespace == true else { continue }
            let names = text.dropFirst(digits.count).components(separatedBy: "·").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            layers.append(Layer(level: level, modules: names))
        }
    }
}

/// The targets `Package.swift` declares, read from its text: `.target`, `.executableTarget`,
/// `.systemLibrary` and `.testTarget` calls, those appended under `#if` included, with their `path:`
/// and `dependencies:` (and dependencies appended later with `.dependencies.append`).
struct PackageManifest {
    struct Target {
        let name: String
        let kind: String
        let path: String?
        var dependencies: [String]

        /// A module of the package: not a test, not test support or a fixture under `Tests/`, not an
        /// example app under `Examples/`. The C libraries' `.systemLibrary` targets are modules.
        var isModule: Bool {
            kind != "testTarget" && !(path?.hasPrefix("Tests/") ?? false) && !isExample
        }

        var isExample: Bool { path?.hasPrefix("Examples/") ?? false }
    }

    let targets: [Target]

    var modules: [Target] { targets.filter(\.isModule) }
    var examples: [Target] { targets.filter(\.isExample) }

    static func load() throws -> PackageManifest {
        try PackageManifest(text: String(contentsOf: SharedTestData.packageRoot.appendingPathComponent("Package.swift"), encoding: .utf8))
    }

    init(text: String) {
        // Each call is marked with a separator and its kind, then the text is cut at the separators:
        // a call's piece runs to the next call, and holds its own name, path and dependencies.
        var marked = text
        for kind in ["target", "executableTarget", "systemLibrary", "testTarget"] {
            marked = marked.replacingOccurrences(of: ".\(kind)(name: \"", with: "\u{1}\(kind)\u{2}")
        }
        var targets: [Target] = []
        for piece in marked.components(separatedBy: "\u{1}").dropFirst() {
            let kindAndRest = piece.components(separatedBy: "\u{2}")
            guard kindAndRest.count >= 2 else { continue }
            let rest = kindAndRest.dropFirst().joined(separator: "\u{2}")
            let name = rest.components(separatedBy: "\"")[0]
            targets.append(Target(name: name, kind: kindAndRest[0], path: Self.firstString(after: "path: \"", in: rest),
                                  dependencies: Self.dependencies(in: rest)))
        }
        // `package.targets.first { $0.name == "X" }?.dependencies.append("Y")`
        for line in text.components(separatedBy: "\n") where line.contains("$0.name == \"") && line.contains(".dependencies.append(\"") {
            guard let name = Self.firstString(after: "$0.name == \"", in: line),
                  let dependency = Self.firstString(after: ".dependencies.append(\"", in: line),
                  let index = targets.firstIndex(where: { $0.name == name }) else { continue }
            targets[index].dependencies.append(dependency)
        }
        self.targets = targets
    }

    /// The text after `marker` up to the next double quote (`marker` ends with one).
    static func firstString(after marker: String, in text: String) -> String? {
        let parts = text.components(separatedBy: marker)
        guard parts.count > 1 else { return nil }
        return parts[1].components(separatedBy: "\"")[0]
    }

    /// The quoted names of the first `dependencies: [ … ]` in `text`.
    static func dependencies(in text: String) -> [String] {
        let parts = text.components(separatedBy: "dependencies: [")
        guard parts.count > 1 else { return [] }
        let list = parts[1].components(separatedBy: "]")[0].components(separatedBy: "\"")
        return stride(from: 1, to: list.count, by: 2).map { list[$0] }
    }
}
