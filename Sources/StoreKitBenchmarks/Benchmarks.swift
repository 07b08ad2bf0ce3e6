import StoreKitCommands

/// `storekit bench …`: the benchmarks, each reporting its ratio against a limit measured in the same
/// run (README, docs/benchmarks.md). They live apart from the command tree and reach engine internals
/// (synthetic subscribers, imported history, notification tallies) through `package` access, so the
/// engine's public API stays what apps and servers need.
public enum Benchmarks {
    /// The `bench` commands, added to the tree by the `storekit` executable.
    public static let commands: [any Command.Type] = [
        BenchVerify.self, BenchCatalog.self, BenchPurchase.self, BenchRenewals.self, BenchLedger.self, BenchLedgerProbe.self,
        BenchServe.self, BenchSharedStore.self, BenchTransactionManager.self, BenchBackend.self, BenchPipeline.self,
    ]
}
