#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension Socket {
    /// Makes the connection on `fd` end with a TCP reset, at once and without an answer: a
    /// thread blocked reading it wakes to an end of stream, later reads (the connection's drain
    /// of an unread body) end at once, and its close sends RST instead of FIN. The descriptor
    /// stays open for its connection to close.
    static func abort(_ fd: Int32) {
        resetOnClose(fd)
        shutdown(fd, Int32(SHUT_RD))
    }

    /// Stops reading `fd` after an answer was written in full and the writing side ended: what
    /// the client still sends is not read, so a body that never ends cannot hold the connection.
    static func stopReading(_ fd: Int32) {
        shutdown(fd, Int32(SHUT_RD))
    }
}
