import Foundation

extension Data {
    /// `withUnsafeBytes` that keeps `body`'s typed error, which `withUnsafeBytes` rethrows untyped.
    func withBytes(_ body: (UnsafeRawBufferPointer) throws(ErrandError) -> Void) throws(ErrandError) {
        var failure: ErrandError?
        withUnsafeBytes { bytes in
            do throws(ErrandError) {
                try body(bytes)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }
}
