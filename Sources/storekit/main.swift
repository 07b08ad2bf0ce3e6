import Foundation
import StoreKitCommands

exit(await StoreKitCommand.main(Array(CommandLine.arguments.dropFirst())))
