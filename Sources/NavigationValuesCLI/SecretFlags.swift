import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// `--admin-token T` and `--admin-token-file FILE` (`serve`).
struct AdminTokenFlags: ParsableArguments, FlagValues {
    @Option(.flag("admin-token", "T", "Admin token (default: generated at start and printed once)."))
    var adminToken: String?
    @Option(.flag("admin-token-file", "FILE", SecretFlags.fileHelp("admin-token")), completion: .file())
    var adminTokenFile: String?
}

/// `--create-token T` and `--create-token-file FILE` (`serve`).
struct CreateTokenFlags: ParsableArguments, FlagValues {
    @Option(.flag("create-token", "T", "Creating a session needs this token (default: none)."))
    var createToken: String?
    @Option(.flag("create-token-file", "FILE", SecretFlags.fileHelp("create-token")), completion: .file())
    var createTokenFile: String?
}

/// Secrets (the tokens) a subcommand takes either as a value, `--NAME T`, or from a file,
/// `--NAME-file FILE`, the way Docker and Kubernetes hand secrets to a container; each form has its
/// variable as every flag does (`NAVIGATION_VALUES_NAME`, `NAVIGATION_VALUES_NAME_FILE`). A value on
/// the command line shows in `ps` to every user of the machine; a file does not.
enum SecretFlags {
    /// The most a secret file may hold: a token, not a document.
    static let maxFileBytes = 4096

    /// The help of `--NAME-file`.
    static func fileHelp(_ name: String) -> String {
        "File holding --\(name) (such as a Docker secret); its trailing line break is ignored."
    }

    /// The secret `name`, from `--name` or from the file `--name-file` names, or nil when neither
    /// is given. One form on the command line wins over the other in the environment, as every flag
    /// wins over its variable; both on the command line, or both in the environment, is an error.
    /// - Throws: `UsageError` for both forms given, an empty value, or a file that cannot be read,
    ///   is empty, or holds more than the token.
    static func value(_ name: String, in arguments: ParsedArguments) throws(UsageError) -> String? {
        let fileName = name + "-file"
        let valueSource = arguments.sources[name] ?? "--\(name)"
        let fileSource = arguments.sources[fileName] ?? "--\(fileName)"
        var value = arguments[name]
        var path = arguments[fileName]
        if value != nil, path != nil {
            let valueOnCommandLine = valueSource.hasPrefix("--")
            guard valueOnCommandLine != fileSource.hasPrefix("--") else {
                throw UsageError("\(valueSource) and \(fileSource) are both given; give one of them")
            }
            if valueOnCommandLine { path = nil } else { value = nil }
        }
        if let value {
            guard !value.isEmpty else { throw UsageError("\(valueSource) is empty") }
            return value
        }
        guard let path else { return nil }
        return try read(path, source: fileSource)
    }

    /// The secret in the file at `path`, without its trailing line breaks (`echo` and most editors
    /// end a file with one).
    /// - Throws: `UsageError` naming `source` and the file.
    static func read(_ path: String, source: String) throws(UsageError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw UsageError("\(source): cannot read '\(path)': \(errorText(errno))") }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: maxFileBytes + 1)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw UsageError("\(source): cannot read '\(path)': \(errorText(errno))")
            }
            if count == 0 { break }
            bytes += buffer[..<count]
            guard bytes.count <= maxFileBytes else {
                throw UsageError(
                    "\(source): '\(path)' holds more than \(maxFileBytes) bytes; it should hold the token alone")
            }
        }
        while let last = bytes.last, last == UInt8(ascii: "\n") || last == UInt8(ascii: "\r") { bytes.removeLast() }
        guard !bytes.isEmpty else { throw UsageError("\(source): '\(path)' is empty") }
        guard !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }),
            let secret = String(validating: bytes, as: UTF8.self)
        else {
            throw UsageError(
                "\(source): '\(path)' holds more than one line, a control character or invalid UTF-8; it should hold the token alone"
            )
        }
        return secret
    }

    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
