# Sourced by the benchmarks that set the server against nginx under wrk (bench-reads.sh,
# bench-tls.sh): the head of their nginx.conf, and the figures of wrk's output.

# The start of an nginx.conf that runs from folder $1 (its pid, logs and temporary files there),
# with 2 workers, no access log and connections kept alive without end, up to the `http {` block's
# first lines; the caller writes its servers and closes the block.
nginx_conf_head() {
    cat <<CONF
worker_processes 2;
pid $1/nginx.pid;
error_log $1/logs/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $1/body;
    proxy_temp_path $1/proxy;
    fastcgi_temp_path $1/fastcgi;
    uwsgi_temp_path $1/uwsgi;
    scgi_temp_path $1/scgi;
    keepalive_requests 1000000;
CONF
}

# A wrk latency (`812.00us`, `1.20ms`, `2.00s`) in milliseconds.
to_ms() {
    case "$1" in
        *us) awk -v v="${1%us}" 'BEGIN {printf "%.3f", v / 1000}' ;;
        *ms) awk -v v="${1%ms}" 'BEGIN {printf "%.3f", v}' ;;
        *s) awk -v v="${1%s}" 'BEGIN {printf "%.3f", v * 1000}' ;;
        *) echo "$1" ;;
    esac
}

# The median of its arguments.
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# "requests_per_second p99_ms non_2xx" of one wrk run's output on stdin.
wrk_figures() {
    local output
    output="$(cat)"
    echo "$(echo "$output" | awk '/Requests\/sec/ {print $2}') $(to_ms "$(echo "$output" | awk '$1 == "99%" {print $2}')") $(echo "$output" | awk '/Non-2xx/ {print $5}')"
}
