extension Dictionary where Key == String, Value == String {
    /// The value of a header field, its name matched ignoring ASCII case as HTTP requires.
    func headerField(_ name: String) -> String? {
        if let exact = self[name] { return exact }
        return first { $0.key.equalsIgnoringASCIICase(name) }?.value
    }

    /// Sets a header field, replacing it under any spelling of its name: `accept` and `Accept`
    /// are one field, and must not go out twice.
    mutating func setHeaderField(_ name: String, _ value: String) {
        for spelling in keys where spelling.equalsIgnoringASCIICase(name) {
            self[spelling] = nil
        }
        self[name] = value
    }

    /// Removes a header field under every spelling of its name.
    mutating func removeHeaderField(_ name: String) {
        for spelling in keys where spelling.equalsIgnoringASCIICase(name) {
            self[spelling] = nil
        }
    }
}
