import Foundation
#if FUZZING
import CFuzzDriver
#endif

// cohort-fuzz: the fuzz targets of Cohort's parsers of outside bytes.
//   cohort-fuzz list
//   cohort-fuzz replay TARGET FILE|DIR…     run inputs through TARGET once (any build; CI's regression check)
//   cohort-fuzz seed DIR                    write a seed corpus of genuine inputs, DIR/TARGET/…
//   cohort-fuzz fuzz TARGET [libFuzzer options] [CORPUS…]   (only in a -sanitize=fuzzer -DFUZZING build: make fuzz)

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("error: \(message)\n".utf8))
    exit(64)
}

func target(_ name: String?) -> FuzzTarget {
    guard let name, let target = FuzzTarget(rawValue: name) else {
        fail("E_MALFORMED: unknown target '\(name ?? "")' (cohort-fuzz list names them)")
    }
    return target
}

/// The regular files at `paths` (folders walked), sorted.
func inputs(_ paths: [String]) -> [URL] {
    var files: [URL] = []
    for path in paths {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { continue }
        if isDirectory.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            files += names.sorted().map { URL(fileURLWithPath: path).appendingPathComponent($0) }
        } else {
            files.append(URL(fileURLWithPath: path))
        }
    }
    return files
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "list":
    print(FuzzTarget.allCases.map(\.rawValue).joined(separator: "\n"))
case "replay":
    let chosen = target(arguments.dropFirst(2).first)
    let files = inputs(Array(arguments.dropFirst(3)))
    for file in files {
        guard let data = try? Data(contentsOf: file) else { continue }
        chosen.run(data)
    }
    print("\(chosen.rawValue): \(files.count) inputs, no crash")
case "seed":
    guard let directory = arguments.dropFirst(2).first else { fail("E_MALFORMED: seed needs a folder") }
    do {
        try Seeds.write(into: URL(fileURLWithPath: directory))
    } catch {
        fail("E_IO: cannot write seeds: \(error)")
    }
case "fuzz":
    #if FUZZING
    Fuzzing.target = target(arguments.dropFirst(2).first)
    // libFuzzer reads its own options and corpus folders from what follows the target.
    let driverArguments = [arguments[0]] + Array(arguments.dropFirst(3))
    var argc = CInt(driverArguments.count)
    var cStrings: [UnsafeMutablePointer<CChar>?] = driverArguments.map { strdup($0) } + [nil]
    let status = cStrings.withUnsafeMutableBufferPointer { buffer -> CInt in
        var argv = buffer.baseAddress
        return LLVMFuzzerRunDriver(&argc, &argv, fuzzOneInput)
    }
    exit(status)
    #else
    fail("E_MALFORMED: this cohort-fuzz was built without the fuzzer (run `make fuzz`)")
    #endif
default:
    fail("E_MALFORMED: usage: cohort-fuzz list | replay TARGET FILE… | seed DIR | fuzz TARGET [libFuzzer options] [CORPUS…]")
}

#if FUZZING
enum Fuzzing {
    nonisolated(unsafe) static var target = FuzzTarget.path
}

/// libFuzzer's archive refers to this symbol; the driver above is given the same function.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    Fuzzing.target.run(data.map { Data(bytes: $0, count: size) } ?? Data())
    return 0
}
#endif
