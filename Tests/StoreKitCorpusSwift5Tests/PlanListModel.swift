// Corpus (Swift 5): a view model in a file that imports only Foundation, as many apps keep theirs
// beside the StoreKit file: `ObservableObject` and `@Published` come with Foundation on Apple platforms.
// The rows are filled by the store file's code.
import Foundation

final class PlanListModel: ObservableObject {
    struct Row: Equatable {
        var name: String
        var price: String
        var period: String
    }

    @Published var rows: [Row] = []
    @Published var isLoading = false
}
