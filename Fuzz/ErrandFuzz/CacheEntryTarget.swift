import Errand
import Foundation

/// Cache files read back from disk, truncated, corrupted or forged: reading one must never
/// crash, and a file that reads must write back the same entry.
enum CacheEntryTarget {
    static func run(_ data: Data) {
        // Also at an offset: a Data slice's indices do not start at zero.
        let file = data.count > 1 && data.first == 0 ? data.dropFirst() : data
        guard let entry = CacheEntry(file: file) else { return }
        let encoded = entry.encoded()
        guard let again = CacheEntry(file: encoded) else { fatalError("an entry's own file does not read back") }
        require(again.body == entry.body, "the body reads back differently")
        require(again.encoded() == encoded, "the entry writes back differently")
    }
}
