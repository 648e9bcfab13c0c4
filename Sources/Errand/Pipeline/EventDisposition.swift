/// What the pipeline does with a transport event after a receiver that owns the body — a
/// download's file, a stream's consumer — has seen it.
enum EventDisposition {
    /// Keep this event on the task as for any request; it may differ from the one received, as
    /// the part of a rejected stream's body that is kept.
    case record(TransportEvent)
    /// Already handled by the receiver.
    case consumed
    /// Keep this event, if any, as for any request, then judge the attempt as if its response had
    /// ended there, and stop the transport: what the task keeps of a rejected stream is complete.
    case recordAndEnd(TransportEvent?)
    /// This attempt is abandoned: cancel it (on its head) and, once it completes, send again.
    case restart
    /// The receiver failed: end the request with this error.
    case fail(ErrandError)
}
