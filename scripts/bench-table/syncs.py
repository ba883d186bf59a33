#!/usr/bin/env python3
"""The syncs of a paced run (bench-table.sh --only-paced --syncs), beside its slowest requests.

Usage: syncs.py PERF_TRACE FDS REQUESTS DATABASE OFFSET_MS TASKS

PERF_TRACE is `perf trace -a -T -e fdatasync,fsync`'s output, TASKS the server's thread ids
(sampled from /proc/PID/task during the run, one a line: syncs of other threads are left out), FDS the server's descriptors
during the run (`FD PATH FLAGS`, FLAGS octal from /proc/PID/fdinfo), REQUESTS paced-load's
PACED_LOAD_TRACE file (`push|pop DUE_MS LATENCY_MS CONNECTION`, CLOCK_MONOTONIC), DATABASE the
SQLite file's path and OFFSET_MS perf's clock less CLOCK_MONOTONIC.

Each sync is named by its file and connection. The store opens, in this order, the writer's
connection, the checkpointer's connection, the checkpointer's own read-only descriptor of the
database file (synced after its rounds) and the readers' (read-only, never synced); each
connection opens its log once it first uses it, the writer first. So of the descriptors synced: the
read-only one of the database file is the checkpointer's own; of the others of each file, the
lowest is the writer's and the next the checkpointer connection's.

Prints the durations of each kind (count, p50, p90, p99, max, busy share of the run), then the
five worst stalls: the requests late by more than their run's p99, in episodes, each with the
syncs during its worst request's wait: how many, the longest, and the longest time no sync ran (a
stall that no sync explains: the server's threads waited for a core, or did something else).
"""

import re
import sys
from collections import defaultdict

LINE = re.compile(r"^\s*([\d.]+) \(\s*([\d.]+) ms\): (.*)/(\d+) (fdatasync|fsync)\(fd: (\d+)")


def quantile(values, q):
    return values[int((len(values) - 1) * q)] if values else 0.0


def main():
    trace_path, fds_path, requests_path, database, offset, tasks_path = sys.argv[1:7]
    offset = float(offset)
    tasks = {int(line) for line in open(tasks_path) if line.strip().isdigit()}
    files = {}
    for line in open(fds_path):
        parts = line.split()
        if len(parts) == 3:
            files[int(parts[0])] = (parts[1], int(parts[2], 8))
    syncs = []  # (start ms monotonic, duration ms, fd, tid)
    for line in open(trace_path):
        match = LINE.match(line)
        if match:
            start, duration, _, tid, _, fd = match.groups()
            # A sync still running when the trace stopped has no duration (perf prints 2^64 - x).
            if int(tid) in tasks and float(duration) < 1e6:
                syncs.append((float(start) - offset, float(duration), int(fd), int(tid)))
    synced = sorted({fd for _, _, fd, _ in syncs})

    def name(fd, synced_of_file, owners):
        path, flags = files.get(fd, ("?", 2))
        if path == database and flags & 3 == 0:
            return "database file, checkpointer's own descriptor"
        index = synced_of_file.index(fd)
        owner = owners[index] if index < len(owners) else f"descriptor {fd}"
        kind = "log" if path == database + "-wal" else "database file" if path == database else path
        return f"{kind}, {owner}"

    names = {}
    for path in (database, database + "-wal"):
        of_file = [fd for fd in synced if files.get(fd, ("?", 2))[0] == path and files[fd][1] & 3 != 0]
        for fd in of_file:
            names[fd] = name(fd, of_file, ["writer's connection", "checkpointer's connection"])
    for fd in synced:
        names.setdefault(fd, name(fd, [fd], [f"descriptor {fd}"]))

    requests = []
    for line in open(requests_path):
        kind, due, latency, connection = line.split()
        requests.append((float(due), float(latency), kind))
    requests.sort()
    span = (requests[-1][0] - requests[0][0]) if requests else 1.0

    by_name = defaultdict(list)
    threads = defaultdict(set)
    for start, duration, fd, tid in syncs:
        by_name[names[fd]].append(duration)
        threads[names[fd]].add(tid)
    print(f"syncs during the run ({len(syncs)}; durations in ms; busy = share of the run spent syncing):")
    for label, durations in sorted(by_name.items(), key=lambda item: -len(item[1])):
        durations.sort()
        print(f"  {label:52} n {len(durations):6}  p50 {quantile(durations, .5):6.2f}  p90 {quantile(durations, .9):6.2f}"
              f"  p99 {quantile(durations, .99):6.2f}  max {durations[-1]:6.2f}  busy {sum(durations) / span:5.1%}"
              f"  ({len(threads[label])} threads)")

    if not requests:
        return
    latencies = sorted(latency for _, latency, _ in requests)
    p99 = quantile(latencies, .99)
    # Episodes: slow requests whose waits overlap.
    episodes = []
    for due, latency, kind in requests:
        if latency < p99:
            continue
        if episodes and due <= episodes[-1]["end"]:
            episode = episodes[-1]
            episode["end"] = max(episode["end"], due + latency)
            episode["count"] += 1
            if latency > episode["worst"][1]:
                episode["worst"] = (due, latency)
        else:
            episodes.append({"start": due, "end": due + latency, "count": 1, "worst": (due, latency)})
    episodes.sort(key=lambda episode: -episode["worst"][1])
    origin = requests[0][0]
    print(f"the five worst stalls (requests late by more than the run's p99, {p99:.2f} ms, in {len(episodes)} episodes),"
          " each with the syncs during its worst request's wait: the longest, and the longest time none ran")
    for episode in episodes[:5]:
        due, latency = episode["worst"]
        end = due + latency
        overlapping = sorted(s for s in syncs if s[0] < end and s[0] + s[1] > due)
        longest = max(overlapping, key=lambda s: s[1], default=None)
        # The longest stretch of the wait with no sync in flight.
        idle, covered = 0.0, due
        for start, duration, _, _ in overlapping:
            idle = max(idle, start - covered)
            covered = max(covered, start + duration)
        idle = max(idle, end - covered)
        print(f"  at {(due - origin) / 1e3:7.3f} s: {episode['count']} requests over {episode['end'] - episode['start']:.1f} ms,"
              f" the worst {latency:.1f} ms: {len(overlapping)} syncs", end="")
        if longest:
            print(f", the longest {longest[1]:.2f} ms ({names[longest[2]]}, {longest[0] - due:+.1f} ms)", end="")
        print(f"; none for {idle:.1f} ms")


if __name__ == "__main__":
    main()
