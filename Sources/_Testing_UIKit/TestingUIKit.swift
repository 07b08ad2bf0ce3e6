// Swift Testing's cross-import overlay for UIKit: a file that imports both Testing and UIKit makes the
// compiler load `_Testing_UIKit`, which Apple ships with its SDKs. Here UIKit is this package's
// stand-in, and Swift Testing has nothing to add to it, so the overlay is empty; it exists so such
// files compile.
@_exported import UIKit
