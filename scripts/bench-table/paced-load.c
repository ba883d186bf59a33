// The paced load of scripts/bench-table.sh (wrk2 is not packaged): CONNECTIONS threads, each with
// one keep-alive connection to 127.0.0.1:PORT, alternate push and pop on sessions of their own
// (every CONNECTIONS-th line of SESSIONS_FILE, "id token" per line) at RATE requests/s in all,
// for SECONDS. The schedule is fixed in advance (request k of connection c is due at
// start + (k + c / CONNECTIONS) * CONNECTIONS / RATE), and each latency runs from when its request
// was due, not from when it was sent, so a slow answer delays and counts against the requests
// behind it (no coordinated omission). Prints two lines:
//   push achieved_rate p50_ms p90_ms p99_ms p999_ms max_ms non_2xx
//   pop  ...
// With a sixth argument `redis`, PORT is a redis-server's and each connection alternates
// `LPUSH list:<session id> <screen>` and `LPOP list:<session id>` (RESP) on the same schedule: the
// same paced load against the anchor, counting every reply that is not an error as 2xx.
// With PACED_LOAD_TRACE=FILE in the environment, also writes every request to FILE, one a line:
// `push|pop DUE_MS LATENCY_MS CONNECTION`, DUE_MS on CLOCK_MONOTONIC (to line slow requests up
// with a trace of the server's syscalls).
// Usage: paced-load PORT SESSIONS_FILE RATE CONNECTIONS SECONDS [redis]
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static int port, connections;
static double rate, seconds, start;
static char **ids, **tokens;
static int sessionCount;
static int redis;

typedef struct {
    int index;
    double *latencies[2], *dues[2];
    size_t counts[2], capacity;
    long bad;
} Worker;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void sleepUntil(double when) {
    struct timespec t = {(time_t)when, (long)((when - (time_t)when) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, 0) == EINTR) {}
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int connectTo(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        perror("connect");
        exit(1);
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// Sends all `length` bytes of `request`.
static void sendAll(int fd, const char *request, size_t length) {
    for (size_t sent = 0; sent < length;) {
        ssize_t n = send(fd, request + sent, length - sent, MSG_NOSIGNAL);
        if (n <= 0) { perror("send"); exit(1); }
        sent += n;
    }
}

// Reads what has arrived into `buffer` after its first `have` bytes, NUL-terminated; returns the
// new count.
static size_t receiveMore(int fd, char *buffer, size_t size, size_t have) {
    ssize_t n = recv(fd, buffer + have, size - 1 - have, 0);
    if (n <= 0) { fprintf(stderr, "recv: the server closed the connection or failed\n"); exit(1); }
    have += n;
    buffer[have] = 0;
    return have;
}

// Reads one HTTP answer (Content-Length bodies only); returns its status.
static int httpAnswer(int fd, char *buffer, size_t size) {
    size_t have = 0;
    char *headEnd = 0;
    while (!headEnd) {
        have = receiveMore(fd, buffer, size, have);
        headEnd = strstr(buffer, "\r\n\r\n");
    }
    int status = atoi(buffer + 9);
    char *field = strcasestr(buffer, "\r\ncontent-length:");
    size_t body = field && field < headEnd ? strtoul(field + 17, 0, 10) : 0;
    size_t total = (headEnd + 4 - buffer) + body;
    while (have < total) have = receiveMore(fd, buffer, size, have);
    return status;
}

// Reads one RESP reply to an LPUSH (`:N`) or an LPOP (`$N` and N bytes, or `$-1`, `_`); returns
// 200, or 500 for an error reply (`-ERR ...`).
static int redisReply(int fd, char *buffer, size_t size) {
    size_t have = 0;
    char *lineEnd = 0;
    while (!lineEnd) {
        have = receiveMore(fd, buffer, size, have);
        lineEnd = strstr(buffer, "\r\n");
    }
    if (buffer[0] == '-') return 500;
    if (buffer[0] != '$') return 200;
    long length = strtol(buffer + 1, 0, 10);
    size_t total = (lineEnd + 2 - buffer) + (length > 0 ? (size_t)length + 2 : 0);
    while (have < total) have = receiveMore(fd, buffer, size, have);
    return 200;
}

static void *run(void *argument) {
    Worker *worker = argument;
    int fd = connectTo();
    char buffer[65536], requests[2][1024];
    const char *bodies[2] = {"{\"name\":\"Detail\",\"values\":{\"title\":\"x\"}}", "{\"count\":1}"};
    const char *verbs[2] = {"push", "pop"};
    double interval = connections / rate;
    double due = start + interval * worker->index / connections;
    for (long k = 0, session = worker->index; due < start + seconds; k++, due += interval) {
        int kind = k % 2;
        if (kind == 0 && k > 0) session = (session + connections) % sessionCount;
        size_t length;
        if (redis) {
            char key[300];
            int keyLength = snprintf(key, sizeof key, "list:%s", ids[session]);
            length = kind == 0
                ? snprintf(requests[kind], sizeof requests[kind], "*3\r\n$5\r\nLPUSH\r\n$%d\r\n%s\r\n$%zu\r\n%s\r\n",
                           keyLength, key, strlen(bodies[0]), bodies[0])
                : snprintf(requests[kind], sizeof requests[kind], "*2\r\n$4\r\nLPOP\r\n$%d\r\n%s\r\n", keyLength, key);
        } else {
            length = snprintf(requests[kind], sizeof requests[kind],
                              "POST /v1/sessions/%s/%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                              "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
                              ids[session], verbs[kind], tokens[session], strlen(bodies[kind]), bodies[kind]);
        }
        sleepUntil(due);
        sendAll(fd, requests[kind], length);
        int status = redis ? redisReply(fd, buffer, sizeof buffer) : httpAnswer(fd, buffer, sizeof buffer);
        double latency = now() - due;
        if (status < 200 || status > 299) worker->bad++;
        if (worker->counts[kind] == worker->capacity) {
            worker->capacity *= 2;
            for (int i = 0; i < 2; i++) {
                worker->latencies[i] = realloc(worker->latencies[i], worker->capacity * sizeof(double));
                worker->dues[i] = realloc(worker->dues[i], worker->capacity * sizeof(double));
            }
        }
        worker->dues[kind][worker->counts[kind]] = due;
        worker->latencies[kind][worker->counts[kind]++] = latency;
    }
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 6 && !(argc == 7 && strcmp(argv[6], "redis") == 0)) {
        fprintf(stderr, "usage: %s PORT SESSIONS_FILE RATE CONNECTIONS SECONDS [redis]\n", argv[0]);
        return 2;
    }
    redis = argc == 7;
    port = atoi(argv[1]);
    rate = atof(argv[3]);
    connections = atoi(argv[4]);
    seconds = atof(argv[5]);
    FILE *file = fopen(argv[2], "r");
    if (!file) { perror(argv[2]); return 1; }
    ids = malloc(100000 * sizeof(char *));
    tokens = malloc(100000 * sizeof(char *));
    char id[256], token[256];
    while (sessionCount < 100000 && fscanf(file, "%255s %255s", id, token) == 2) {
        ids[sessionCount] = strdup(id);
        tokens[sessionCount++] = strdup(token);
    }
    fclose(file);
    if (sessionCount < connections) { fprintf(stderr, "fewer sessions than connections\n"); return 1; }
    Worker *workers = calloc(connections, sizeof(Worker));
    pthread_t *threads = calloc(connections, sizeof(pthread_t));
    start = now() + 0.2;
    for (int i = 0; i < connections; i++) {
        workers[i].index = i;
        workers[i].capacity = 4096;
        for (int j = 0; j < 2; j++) {
            workers[i].latencies[j] = malloc(4096 * sizeof(double));
            workers[i].dues[j] = malloc(4096 * sizeof(double));
        }
        pthread_create(&threads[i], 0, run, &workers[i]);
    }
    long bad = 0;
    size_t totals[2] = {0, 0};
    for (int i = 0; i < connections; i++) {
        pthread_join(threads[i], 0);
        bad += workers[i].bad;
        for (int j = 0; j < 2; j++) totals[j] += workers[i].counts[j];
    }
    double elapsed = now() - start;
    const char *names[2] = {"push", "pop"};
    const char *tracePath = getenv("PACED_LOAD_TRACE");
    if (tracePath && *tracePath) {
        FILE *trace = fopen(tracePath, "w");
        if (!trace) { perror(tracePath); return 1; }
        for (int i = 0; i < connections; i++)
            for (int j = 0; j < 2; j++)
                for (size_t k = 0; k < workers[i].counts[j]; k++)
                    fprintf(trace, "%s %.3f %.3f %d\n", names[j], workers[i].dues[j][k] * 1e3,
                            workers[i].latencies[j][k] * 1e3, i);
        fclose(trace);
    }
    for (int j = 0; j < 2; j++) {
        double *all = malloc((totals[j] + 1) * sizeof(double));
        size_t n = 0;
        for (int i = 0; i < connections; i++) {
            memcpy(all + n, workers[i].latencies[j], workers[i].counts[j] * sizeof(double));
            n += workers[i].counts[j];
        }
        qsort(all, n, sizeof(double), compare);
#define AT(q) (n ? all[(size_t)((n - 1) * (q))] * 1e3 : 0)
        printf("%s %.0f %.3f %.3f %.3f %.3f %.3f %ld\n", names[j], n / elapsed, AT(0.5), AT(0.9), AT(0.99), AT(0.999),
               AT(1.0), bad);
        free(all);
    }
    return 0;
}
