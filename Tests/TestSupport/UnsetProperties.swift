/// The names of `value`'s stored properties that are optionals holding `nil`, except those in
/// `ignoring`: for samples meant to set every field, read back by a reader that must read them all.
public func unsetOptionalProperties(of value: Any, ignoring: Set<String> = []) -> [String] {
    Mirror(reflecting: value).children.compactMap { child in
        guard let label = child.label, !ignoring.contains(label) else { return nil }
        let property = Mirror(reflecting: child.value)
        return property.displayStyle == .optional && property.children.isEmpty ? label : nil
    }
}
