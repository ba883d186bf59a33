// The plain-SQLite anchor of scripts/bench-table.sh: one row per transaction, WAL with
// synchronous=FULL, one connection, for a fixed time. Prints
//   commits_per_second p50_ms p99_ms pages_per_commit
// where pages are those SQLite wrote for the connection (SQLITE_DBSTATUS_CACHE_WRITE: WAL frames).
// Usage: sqlite-commits DB_PATH SECONDS
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void check(int rc, sqlite3 *db, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "%s: %s\n", what, sqlite3_errmsg(db));
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DB_PATH SECONDS\n", argv[0]);
        return 2;
    }
    double seconds = atof(argv[2]);
    sqlite3 *db;
    check(sqlite3_open(argv[1], &db), db, "open");
    check(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                           "CREATE TABLE IF NOT EXISTS events(id INTEGER PRIMARY KEY, session INTEGER NOT NULL, body TEXT NOT NULL);",
                       0, 0, 0),
          db, "setup");
    sqlite3_stmt *insert;
    check(sqlite3_prepare_v2(db, "INSERT INTO events(session, body) VALUES (?1, ?2)", -1, &insert, 0), db, "prepare");
    // About the size of one pushed screen's event.
    const char *body = "{\"type\":\"screen.pushed\",\"screen\":{\"id\":\"sc_0123456789abcdef\",\"name\":\"Detail\","
                       "\"values\":{\"title\":\"x\"}}}";
    size_t capacity = 1 << 20, count = 0;
    double *latencies = malloc(capacity * sizeof(double));
    int current = 0, high = 0;
    sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &current, &high, 1);
    double start = now(), end = start + seconds, t = start;
    while (t < end) {
        sqlite3_bind_int(insert, 1, (int)(count % 1000));
        sqlite3_bind_text(insert, 2, body, -1, SQLITE_STATIC);
        check(sqlite3_step(insert), db, "insert");
        sqlite3_reset(insert);
        double done = now();
        if (count == capacity) latencies = realloc(latencies, (capacity *= 2) * sizeof(double));
        latencies[count++] = done - t;
        t = done;
    }
    double elapsed = t - start;
    sqlite3_db_status(db, SQLITE_DBSTATUS_CACHE_WRITE, &current, &high, 0);
    qsort(latencies, count, sizeof(double), compare);
    printf("%.0f %.3f %.3f %.2f\n", count / elapsed, latencies[count / 2] * 1e3, latencies[(size_t)(count * 0.99)] * 1e3,
           (double)current / count);
    sqlite3_finalize(insert);
    sqlite3_close(db);
    return 0;
}
