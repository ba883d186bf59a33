/// What a cryptographic operation could not do.
package struct CryptoError: Error, Equatable, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// Calls `body` with `bytes` as contiguous memory: in place for arrays and their slices, else copied once.
func withContiguousBytes<Result, Failure: Error>(
    _ bytes: some Collection<UInt8>, _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
) throws(Failure) -> Result {
    // The standard library's closures here throw untyped errors: the outcome carries the typed one out.
    let inPlace: Swift.Result<Result, Failure>? = bytes.withContiguousStorageIfAvailable { buffer in
        Swift.Result { () throws(Failure) in try body(UnsafeRawBufferPointer(buffer)) }
    }
    if let inPlace { return try inPlace.get() }
    let copied: Swift.Result<Result, Failure> = Array(bytes).withUnsafeBytes { buffer in
        Swift.Result { () throws(Failure) in try body(buffer) }
    }
    return try copied.get()
}
