extension Dictionary where Key == String, Value == String {
    /// The value of a header field, its name matched ignoring ASCII case as HTTP requires.
    func headerField(_ name: String) -> String? {
        if let exact = self[name] { return exact }
        return first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }
}
