/// Keeps each account's cached responses in a folder of its own, named after the current
/// account of an ``AccountStore``, so one user's cached feed is never shown to another and
/// ``AccountStore/signOut(_:agent:)`` deletes exactly that account's.
///
/// ```swift
/// NetworkConfig.shared.addCacheDirPathFilter(AccountCacheDirPathFilter(store: store))
/// ```
///
/// The folder is `account-` and the account id, every byte but ASCII letters, digits, `-`, `_`
/// and `@` percent-encoded, so no `/`, `..` or NUL survives; with no current account, responses
/// cache in the shared folder. The folder is chosen when a request starts.
public struct AccountCacheDirPathFilter: CacheDirPathFilter {
    private let currentAccount: @Sendable () -> String?

    /// Names each request's folder after `store`'s current account.
    public init<Credential>(store: AccountStore<Credential>) {
        currentAccount = { store.current }
    }

    /// `originPath` with the current account's folder added; unchanged with none.
    public func filterCacheDirPath(_ originPath: String, request: any BaseRequest) -> String {
        guard let account = currentAccount() else { return originPath }
        return originPath + (originPath.hasSuffix("/") ? "" : "/") + Self.folderName(for: account)
    }

    /// The folder an account's responses are cached in, relative to the cache directory.
    ///
    /// Capital letters are escaped like any other byte: on a disk that ignores case (macOS's
    /// default) `Ann` and `ann` would otherwise share one folder, and one's responses and cookies.
    static func folderName(for account: String) -> String {
        var name = "account-"
        for byte in account.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                UInt8(ascii: "_"), UInt8(ascii: "@"):
                name.append(Character(Unicode.Scalar(byte)))
            default:
                name += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return name
    }
}
