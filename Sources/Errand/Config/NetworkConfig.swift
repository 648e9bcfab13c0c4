import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Settings shared by every request an agent runs: where requests go, how URLs are filtered,
/// where responses are cached and where callbacks are delivered.
///
/// Every property can be read and written at any time from any thread. Changing ``baseUrl``
/// points every request that does not name its own base at a new server, which is how a
/// whole app is switched to a test server.
public final class NetworkConfig: Sendable {
    /// The configuration ``NetworkAgent/shared`` uses.
    public static let shared = NetworkConfig()

    private struct State {
        var baseUrl = ""
        var cdnUrl = ""
        var urlFilters: [any URLFilter] = []
        var cacheDirPathFilters: [any CacheDirPathFilter] = []
        var interceptors: [any RequestInterceptor] = []
        var requestAccessories: [any RequestAccessory] = []
        var eventMonitors: [EventMonitorChannel] = []
        var cacheDirectory = NetworkConfig.defaultCacheDirectory
        var appVersion = NetworkConfig.defaultAppVersion
        var cacheSizeLimit = 100 * 1024 * 1024
        var cacheStorage: (any CacheStorage)?
        var memoryCacheSizeLimit = 8 * 1024 * 1024
        var cacheClock: @Sendable () -> Date = { Date() }
        var callbackQueue = DispatchQueue.main
        var sessionConfiguration = URLSessionConfiguration.default
        var connection = ConnectionOptions()
        var debugLogEnabled = false
        var maximumResponseSize = 64 << 20
        var isOffline = false
        var followsHTTPCaching = false
        var cookieJar = CookieJar()
    }

    private let state = Locked(State())
    /// Events dropped because a monitor fell too far behind, across every monitor.
    private let droppedMonitorEvents = Locked(0)
    /// The channel of the log ``debugLogEnabled`` turns on, made at its first use.
    private let debugLog = Locked<EventMonitorChannel?>(nil)

    /// Creates a configuration with every setting at its default.
    public init() {}

    /// The base URL of requests that do not name their own, for example `"https://api.example.com/v1"`.
    /// Default `""`.
    public var baseUrl: String {
        get { state[\.baseUrl] }
        set { state[\.baseUrl] = newValue }
    }

    /// The base URL of requests with `useCDN` that do not name their own CDN URL. Default `""`.
    public var cdnUrl: String {
        get { state[\.cdnUrl] }
        set { state[\.cdnUrl] = newValue }
    }

    /// The URL filters, in the order they run. Default empty.
    public var urlFilters: [any URLFilter] {
        state[\.urlFilters]
    }

    /// Appends a filter that runs after those already added.
    public func addUrlFilter(_ filter: any URLFilter) {
        state.withLock { $0.urlFilters.append(filter) }
    }

    /// Removes every URL filter.
    public func clearUrlFilters() {
        state.withLock { $0.urlFilters.removeAll() }
    }

    /// The cache directory filters, in the order they run. Default empty.
    public var cacheDirPathFilters: [any CacheDirPathFilter] {
        state[\.cacheDirPathFilters]
    }

    /// Appends a cache directory filter that runs after those already added.
    public func addCacheDirPathFilter(_ filter: any CacheDirPathFilter) {
        state.withLock { $0.cacheDirPathFilters.append(filter) }
    }

    /// Removes every cache directory filter.
    public func clearCacheDirPathFilters() {
        state.withLock { $0.cacheDirPathFilters.removeAll() }
    }

    /// The interceptors every request runs (unless its ``BaseRequest/usesConfigInterceptors`` is
    /// `false`), in order, before the request's own. Default empty.
    public var interceptors: [any RequestInterceptor] {
        state[\.interceptors]
    }

    /// Appends an interceptor that runs after those already added; requests started from now on use it.
    public func addInterceptor(_ interceptor: any RequestInterceptor) {
        state.withLock { $0.interceptors.append(interceptor) }
    }

    /// Removes every interceptor.
    public func clearInterceptors() {
        state.withLock { $0.interceptors.removeAll() }
    }

    /// The accessories every request has, before its own ``BaseRequest/requestAccessories``; read
    /// when each request is made. Their ``RequestAccessory/requestWillStart(_:)`` runs on the
    /// thread that starts the request — in an `async` caller's own Swift task, where its
    /// task-local values, such as a tracing context, can be read. Default empty.
    public var requestAccessories: [any RequestAccessory] {
        state[\.requestAccessories]
    }

    /// Adds an accessory that every request made from now on has, after those already added.
    public func addRequestAccessory(_ accessory: any RequestAccessory) {
        state.withLock { $0.requestAccessories.append(accessory) }
    }

    /// The event monitors every request reports to, in the order they were added; read when each
    /// request starts. Default empty.
    public var eventMonitors: [any EventMonitor] {
        state[\.eventMonitors].map(\.monitor)
    }

    /// Adds a monitor that every request started from now on reports to; see ``EventMonitor``.
    public func addEventMonitor(_ monitor: any EventMonitor) {
        addEventMonitor(monitor, backlogLimit: EventMonitorChannel.defaultBacklogLimit)
    }

    /// Adds `monitor`, dropping its events past `backlogLimit` behind and delivering each batch
    /// `gatheringDelay` after its first event: tests use a small limit, or a long delay.
    func addEventMonitor(
        _ monitor: any EventMonitor, backlogLimit: Int,
        gatheringDelay: DispatchTimeInterval = EventMonitorChannel.gatheringDelay
    ) {
        let channel = EventMonitorChannel(
            monitor, backlogLimit: backlogLimit, gatheringDelay: gatheringDelay, dropped: droppedMonitorEvents)
        state.withLock { $0.eventMonitors.append(channel) }
    }

    /// Removes every event monitor; requests already started keep reporting to theirs.
    public func clearEventMonitors() {
        state.withLock { $0.eventMonitors.removeAll() }
    }

    /// How many events monitors missed because they fell more than 10,000 events behind, since
    /// the configuration was made. Default `0`.
    public var droppedMonitorEventCount: Int { droppedMonitorEvents[\.self] }

    /// The monitors a request starting now reports to: the added ones, and the debug log when on.
    func monitorsForNewRequest() -> EventMonitors {
        let (channels, logs) = state.withLock { ($0.eventMonitors, $0.debugLogEnabled) }
        guard logs else { return EventMonitors(channels) }
        let log = debugLog.withLock { channel in
            if let channel { return channel }
            let made = EventMonitorChannel(DebugLogMonitor(), dropped: droppedMonitorEvents)
            channel = made
            return made
        }
        return EventMonitors(channels + [log])
    }

    /// The root of the response cache. Default: `Errand/LazyRequestCache` in the user's caches directory.
    public var cacheDirectory: URL {
        get { state[\.cacheDirectory] }
        set { state[\.cacheDirectory] = newValue }
    }

    /// The app version cached responses were stored under; an entry stored under another
    /// version is not served. Default: the main bundle's short version on Apple platforms, `""` elsewhere.
    public var appVersion: String {
        get { state[\.appVersion] }
        set { state[\.appVersion] = newValue }
    }

    /// The most bytes of cached responses kept in one cache directory — each account's folder,
    /// when ``cacheDirPathFilters`` make one per account. Past it, the least recently used
    /// entries are deleted. `0` means no limit. Default 100 MiB.
    public var cacheSizeLimit: Int {
        get { state[\.cacheSizeLimit] }
        set { state[\.cacheSizeLimit] = newValue }
    }

    /// Where cached responses live: an encrypted store or a database of the app's, say. Read when
    /// an agent is made; the agent's memory layer sits above it, and offline mode, revalidation
    /// and every ``CachePolicy`` work the same on any. Default: a ``DiskCacheStorage`` under
    /// ``cacheDirectory``, each folder within ``cacheSizeLimit``.
    public var cacheStorage: any CacheStorage {
        get {
            customCacheStorage
                ?? DiskCacheStorage(
                    root: { [self] in cacheDirectory }, sizeLimit: { [self] in cacheSizeLimit }, onEvict: { _ in })
        }
        set { state[\.cacheStorage] = newValue }
    }

    /// The storage the app set, `nil` for the default, which each agent makes its own of.
    var customCacheStorage: (any CacheStorage)? { state[\.cacheStorage] }

    /// The most bytes of cached responses an agent keeps in memory, so that hot entries are
    /// served without reading a file. An entry larger than a quarter of it is read from disk
    /// each time. `0` turns the memory layer off. Default 8 MiB.
    public var memoryCacheSizeLimit: Int {
        get { state[\.memoryCacheSizeLimit] }
        set { state[\.memoryCacheSizeLimit] = newValue }
    }

    /// The clock cache entries are dated and aged by. Default: the system clock, `Date()`.
    ///
    /// Tests replace it to expire entries without waiting.
    public var cacheClock: @Sendable () -> Date {
        get { state[\.cacheClock] }
        set { state[\.cacheClock] = newValue }
    }

    /// The queue success and failure closures, and the accessories of closure-started tasks, run
    /// on. Default `.main`. A ``RequestDelegate`` is `@MainActor`: delegate calls, and the
    /// accessories of delegate-started tasks, always run on the main queue, as do the closures of
    /// ``BaseRequest/startOnMainActor(ignoreCache:tag:userInfo:success:failure:)``.
    ///
    /// A command-line tool whose main thread waits — on a semaphore, a `sleep`, a `readLine()` —
    /// never gets callbacks on the main queue. Any one of these works:
    /// - `await` the request's ``BaseRequest/response(ignoreCache:)`` from an `async` `main`;
    /// - call `dispatchMain()` at the end of a `main` that is not `async`, and `exit(_:)` from
    ///   the last callback;
    /// - set `callbackQueue` to a queue of its own, such as `DispatchQueue(label: "callbacks")`.
    ///
    /// With ``debugLogEnabled`` on, the log warns once when a callback has waited 5 seconds for
    /// the main queue.
    public var callbackQueue: DispatchQueue {
        get { state[\.callbackQueue] }
        set { state[\.callbackQueue] = newValue }
    }

    /// The cookies requests send and store, unless they opt out (``BaseRequest/usesCookies``) or
    /// belong to an account with a jar of its own (``AccountStore/cookieJar(for:)``). Default: a
    /// new, empty jar in memory for each configuration, ``shared`` included, so one configuration
    /// never sees another's cookies. Replace it with a persisted jar
    /// (``CookieJar/init(fileURL:keepsSessionCookies:)``) to keep cookies across launches; a request
    /// takes the jar set when it is built.
    public var cookieJar: CookieJar {
        get { state[\.cookieJar] }
        set { state[\.cookieJar] = newValue }
    }

    /// The session configuration an agent's default transport is created with. Default `.default`.
    ///
    /// Its cookie settings (`httpCookieStorage`, `httpShouldSetCookies`) are not used: Errand
    /// keeps cookies in ``cookieJar`` under both transports.
    ///
    /// Read once, when the agent creates its transport: set it before the first request.
    public var sessionConfiguration: URLSessionConfiguration {
        get { state[\.sessionConfiguration] }
        set { state[\.sessionConfiguration] = newValue }
    }

    /// How an agent's default transport reaches servers: HTTP version, proxy, trusted roots,
    /// client certificate, host overrides, connections per host. Default ``ConnectionOptions/init()``.
    ///
    /// Read once, when the agent creates its transport, as ``sessionConfiguration`` is: set it
    /// before the first request (``NetworkAgent/shared`` makes its transport on first use).
    public var connection: ConnectionOptions {
        get { state[\.connection] }
        set { state[\.connection] = newValue }
    }

    /// Whether every finished request logs one line (method, URL, status, duration, bytes) to
    /// standard error, with credentials redacted. The line is written before the request's
    /// callback runs or its `await` returns, so a tool that exits right after its last request
    /// still logs it. Default `false`.
    public var debugLogEnabled: Bool {
        get { state[\.debugLogEnabled] }
        set { state[\.debugLogEnabled] = newValue }
    }

    /// The most bytes a response body kept in memory may have; a longer one fails with
    /// ``ErrandError/responseTooLarge(_:)`` as soon as it passes the limit, without being held.
    /// Default 64 MiB. A request overrides it with ``BaseRequest/maximumResponseSize``; a
    /// download's body goes to its file and is not limited.
    public var maximumResponseSize: Int {
        get { state[\.maximumResponseSize] }
        set { state[\.maximumResponseSize] = newValue }
    }

    /// Whether every request started from now on is answered from the cache alone, never the
    /// network, as if its ``BaseRequest/cachePolicy`` were ``CachePolicy/cacheOnly``: the newest
    /// entry whatever its age, or ``ErrandError/cacheMiss(_:)``. Requests already on the wire
    /// finish as they are. Default `false`.
    public var isOffline: Bool {
        get { state[\.isOffline] }
        set { state[\.isOffline] = newValue }
    }

    /// Whether requests are cached as a private HTTP cache caches them (RFC 9111), by what the
    /// server says — `Cache-Control`, `Expires`, `Vary` — rather than only by their own
    /// ``BaseRequest/cacheTimeInSeconds``: the value of ``BaseRequest/followsHTTPCaching`` for
    /// requests that do not say. Default `false`.
    public var followsHTTPCaching: Bool {
        get { state[\.followsHTTPCaching] }
        set { state[\.followsHTTPCaching] = newValue }
    }

    /// The configuration of the agent that is reading a request's definition, for the defaults
    /// that come from it (``BaseRequest/followsHTTPCaching``).
    @TaskLocal static var reading: NetworkConfig?

    private static var defaultCacheDirectory: URL {
        let caches =
            FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("Errand", isDirectory: true)
            .appendingPathComponent("LazyRequestCache", isDirectory: true)
    }

    private static var defaultAppVersion: String {
        #if canImport(Darwin)
            Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String ?? ""
        #else
            ""
        #endif
    }
}
