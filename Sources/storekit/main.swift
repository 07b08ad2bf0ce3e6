import CMalloc
import Foundation
import StoreKitBenchmarks
import StoreKitCommands

// glibc's allocator makes up to eight arenas per core, one for each thread that allocates while the
// others' are busy, and an arena keeps what it has grown to: a store delivering notifications (claimed
// and signed a page at a time on dispatch threads that come and go) ended with a dozen arenas of about
// 16 MB each, mostly free. With one per core (as many threads as run at once) `bench pipeline`'s store
// peaked at 175 MB instead of 318 MB at 100,000 subscribers, and was no slower. Set first thing, before
// the process starts threads.
_ = mallopt(M_ARENA_MAX, Int32(clamping: max(1, ProcessInfo.processInfo.activeProcessorCount)))

exit(await StoreKitCommand.main(Array(CommandLine.arguments.dropFirst()), commands: StoreKitCommand.commands + Benchmarks.commands))
