import NavigationValuesStore

extension StoreError {
    /// An error from PostgreSQL's SQLSTATE, classified into a ``Code``.
    init(sqlState: String, message: String, sql: String?) {
        self.init(code: Self.classify(sqlState: sqlState), message: message, sql: sql)
        self.sqlState = sqlState
    }

    /// Sorts a PostgreSQL SQLSTATE into a kind. The `NV…` states are raised by the schema's own
    /// functions (Migrations/postgres/0001_create_schema.sql, 0008_add_row_check.sql).
    static func classify(sqlState: String) -> Code {
        switch sqlState {
        case "23505", "NV409":  // unique_violation; the session moved on
            return .conflict
        case "NV404", "NV422":  // the session, or the row a change targets, does not exist
            return .invalidData
        case "54000":  // program_limit_exceeded: a value over PostgreSQL's 1 GB field limit
            return .tooLarge
        case "XX001", "XX002":  // data_corrupted, index_corrupted
            return .corrupt
        case "25006", "40001", "40P01", "55P03", "57014":
            // read_only_sql_transaction, serialization_failure, deadlock_detected,
            // lock_not_available (a turn's lock_timeout), query_canceled (statement_timeout)
            return .unavailable
        default:
            break
        }
        switch sqlState.prefix(2) {
        case "08", "53", "57", "58":  // connection, resources, operator intervention, system errors
            return .unavailable
        case "22", "23":  // data exceptions, other integrity constraints
            return .invalidData
        default:
            return .failed
        }
    }
}
