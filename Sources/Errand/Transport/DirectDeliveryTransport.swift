/// A transport that can call a request's `events` on its own thread, saving the hand-off to a
/// thread that delivers them, when the consumer only records what arrives and hands all other
/// work — user code, file and cache I/O — to threads of its own (an ``AwaitingCaller``'s task).
protocol DirectDeliveryTransport: Transport {
    /// Starts `request` as ``Transport/send(_:events:)`` does; when `deliversDirectly`, `events`
    /// may run on the transport's own thread, which then must never wait for it.
    func send(
        _ request: TransportRequest, deliversDirectly: Bool, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> any TransportTask
}
