import Foundation

// One executable for every target. Built with `-sanitize=fuzzer` and `-DERRAND_FUZZING`, `main`
// hands over to libFuzzer, which calls `LLVMFuzzerTestOneInput` with each input for the target
// named by the environment variable ERRAND_FUZZ_TARGET; the arguments are libFuzzer's. Built
// plainly, `main` replays files instead: `ErrandFuzz TARGET PATH...`, each path a file or a
// directory of files, such as a seed corpus.

/// The target ERRAND_FUZZ_TARGET names, looked up once; `list` prints the names and exits.
let selectedTarget: FuzzTarget = {
    let name = ProcessInfo.processInfo.environment["ERRAND_FUZZ_TARGET"] ?? ""
    if name == "list" {
        print(FuzzTarget.all.map(\.name).joined(separator: "\n"))
        exit(0)
    }
    guard let target = FuzzTarget.named(name) else {
        FileHandle.standardError.write(
            Data("ERRAND_FUZZ_TARGET must name a target: \(FuzzTarget.all.map(\.name).joined(separator: ", "))\n".utf8))
        exit(2)
    }
    return target
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ bytes: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let data = bytes.map { Data(bytes: $0, count: count) } ?? Data()
    selectedTarget.run(data)
    return 0
}

#if ERRAND_FUZZING
    /// libFuzzer's own `main`, as a function: SwiftPM links an executable's `main` to its module's.
    @_silgen_name("LLVMFuzzerRunDriver")
    func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ test: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    @main
    enum Fuzz {
        static func main() {
            _ = selectedTarget
            var argc = CommandLine.argc
            var argv = CommandLine.unsafeArgv
            exit(runFuzzerDriver(&argc, &argv, fuzzTestOneInput))
        }
    }
#else
    @main
    enum Replay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            if arguments.first == "list" {
                print(FuzzTarget.all.map(\.name).joined(separator: "\n"))
                return
            }
            guard let name = arguments.first else {
                print(
                    "usage: ErrandFuzz TARGET PATH...   targets: \(FuzzTarget.all.map(\.name).joined(separator: " "))")
                exit(2)
            }
            guard let target = FuzzTarget.named(name) else {
                print("unknown target \(name); targets: \(FuzzTarget.all.map(\.name).joined(separator: " "))")
                exit(2)
            }
            var count = 0
            for path in arguments.dropFirst() {
                for file in files(at: path) {
                    guard let data = FileManager.default.contents(atPath: file) else {
                        print("cannot read \(file)")
                        exit(1)
                    }
                    target.run(data)
                    count += 1
                }
            }
            print("\(name): \(count) inputs replayed, no property violated")
        }

        /// `path` itself, or the regular files under it, sorted.
        static func files(at path: String) -> [String] {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
                return [path]
            }
            let names = (FileManager.default.subpaths(atPath: path) ?? []).sorted()
            return names.map { path + "/" + $0 }.filter {
                var isDirectory: ObjCBool = false
                return FileManager.default.fileExists(atPath: $0, isDirectory: &isDirectory) && !isDirectory.boolValue
            }
        }
    }
#endif
