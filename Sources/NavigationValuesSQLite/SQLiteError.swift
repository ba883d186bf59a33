import CSQLite
import NavigationValuesStore

extension StoreError {
    /// An error from SQLite's extended result code, classified into a ``Code``.
    init(resultCode: Int32, message: String, sql: String?) {
        self.init(code: Self.classify(resultCode), resultCode: resultCode, message: message, sql: sql)
    }

    /// Sorts a result code into a kind. See https://sqlite.org/rescode.html.
    static func classify(_ resultCode: Int32) -> Code {
        switch resultCode {
        case CSQLITE_CONSTRAINT_UNIQUE, CSQLITE_CONSTRAINT_PRIMARYKEY, CSQLITE_CONSTRAINT_ROWID:
            return .conflict
        default:
            break
        }
        switch resultCode & 0xff {
        case SQLITE_TOOBIG:
            return .tooLarge
        case SQLITE_CONSTRAINT, SQLITE_MISMATCH, SQLITE_RANGE:
            return .invalidData
        case SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN,
            SQLITE_PERM, SQLITE_NOMEM, SQLITE_PROTOCOL, SQLITE_NOLFS, SQLITE_AUTH:
            return .unavailable
        case SQLITE_CORRUPT, SQLITE_NOTADB:
            return .corrupt
        default:
            return .failed
        }
    }
}
