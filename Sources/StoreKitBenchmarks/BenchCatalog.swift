import Foundation
import StoreKitCatalog
import StoreKitCommands

/// `storekit bench catalog`: how long reading a `.storekit` file and building its catalog takes per product.
///
/// Reports the full path (parse, validate, build the catalog with formatted prices) per product,
/// next to Foundation's `JSONSerialization` parsing the same bytes in the same run, and the ratio of
/// the full path to the one-millisecond-per-product limit.
struct BenchCatalog: Command {
    static let declaration = CommandDeclaration("bench catalog", group: .benchmarks, abstract: "Measure reading a .storekit file and building its catalog (build with -c release).", arguments: [
        .optionalPositional("FILE", "the .storekit file (default: the example shop)"),
        .flag("--json", "print JSON"),
        .option("--seconds", "S", "how long each measurement runs"),
    ])

    var file: String?
    var json: Bool
    var seconds: Double

    init(parsing arguments: inout ArgumentScanner) throws(ValidationError) {
        json = arguments.flag("--json")
        seconds = try arguments.value("--seconds", expected: "a positive number of seconds") { Double($0).flatMap { $0 > 0 ? $0 : nil } } ?? 2
        file = arguments.nextWord()
    }

    func run(console: Console) async throws {
        let url = try file.map { URL(fileURLWithPath: $0) } ?? largestSharedFile()
        guard let data = FileManager.default.contents(atPath: url.path) else { throw CommandFailure("cannot read \(url.path)") }
        let productCount = Catalog(configuration: try StoreKitConfiguration.read(data, fileName: url.lastPathComponent).configuration).products.count
        guard productCount > 0 else { throw CommandFailure("\(url.lastPathComponent) has no products") }
        let load = try BenchmarkTimer.rate(seconds: seconds) {
            let configuration = try StoreKitConfiguration.read(data, fileName: url.lastPathComponent).configuration
            precondition(Catalog(configuration: configuration).products.count == productCount)
        }
        let foundation = try BenchmarkTimer.rate(seconds: seconds) { _ = try JSONSerialization.jsonObject(with: data) }
        let microsecondsPerProduct = 1_000_000 / load / Double(productCount)
        var report = BenchmarkReport(name: "bench catalog")
        report.add("file", url.lastPathComponent)
        report.add("products", productCount)
        report.add("bytes", data.count)
        report.add("loads_per_second", load.rounded())
        report.add("microseconds_per_product", (microsecondsPerProduct * 100).rounded() / 100)
        report.add("foundation_json_parse_microseconds_per_product", (1_000_000 / foundation / Double(productCount) * 100).rounded() / 100)
        report.add("limit_microseconds_per_product", 1000.0)
        report.add("fraction_of_limit", (microsecondsPerProduct / 1000 * 10_000).rounded() / 10_000)
        console.print(try report.render(json: json))
    }

    private func largestSharedFile() throws -> URL {
        let folder = URL(fileURLWithPath: "../shared/storekit-files")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        let files = names.filter { $0.hasSuffix(".storekit") }.map { folder.appendingPathComponent($0) }
        let sized = files.compactMap { url in (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int).map { (url, $0) } }
        guard let largest = sized.max(by: { $0.1 < $1.1 }) else {
            throw CommandFailure("no FILE given and ../shared/storekit-files is not here; pass a .storekit file")
        }
        return largest.0
    }
}
