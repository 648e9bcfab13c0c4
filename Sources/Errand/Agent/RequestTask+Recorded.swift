extension RequestTask {
    /// What ``record(_:of:limit:)`` did with an event.
    enum Recorded {
        case kept
        /// An event of an earlier or abandoned attempt, or of a finished task.
        case stale
        /// The body, declared or received, passed the limit; nothing more was kept.
        case tooLarge
    }
}
