// The module `import OSLog` finds where Apple's does not exist (Linux): it brings the unified log's
// API from this package's `os` (`Logger`, `OSLogMessage`, `os_log`, `OSSignposter`,
// `OSAllocatedUnfairLock`), as Apple's OSLog re-exports os. Reading the log back (`OSLogStore`)
// is not here: there is no unified log to read on this platform.
@_exported import os
