# bounded.sh — sourced by the end-to-end scripts: waiting for a background process is
# always bounded. A suite that waits on a child forever hangs until meson's timeout with
# no word on what it waited for (issue 38); bwait says what did not end and ends it.
# Every other wait in tests/*.sh is a `for _ in $(seq ...)` poll or a `while read` over a
# file or a finished command's output; tests/waits.py (the meson test bounded_waits)
# checks that each wait, while/until loop and read is one of these or says why it ends.

# bwait PID SECONDS WHAT: the exit status of background process PID once it ended, within
# SECONDS. Past that, prints "TIMEOUT: WHAT did not end within SECONDS s" on stderr, sends
# TERM, then KILL a second later, and returns 124.
bwait() {
    local pid=$1 secs=$2 what=${3:-"process $1"} i
    for ((i = 0; i < secs * 20; i++)); do
        kill -0 "$pid" 2>/dev/null || { wait "$pid"; return; }   # bounded: it has ended
        sleep 0.05
    done
    echo "TIMEOUT: $what did not end within $secs s (pid $pid): ended by the test" >&2
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 20; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null   # bounded: killed
    return 124
}

# wait_until SECONDS CMD [ARG ...]: 0 once CMD succeeds (polled every 0.2 s, its output
# discarded), 1 when SECONDS pass first.
wait_until() {
    local limit=$1; shift
    local end=$((SECONDS + limit))
    until "$@" >/dev/null 2>&1; do   # bounded: returns after $limit seconds
        [ $SECONDS -lt $end ] || return 1
        sleep 0.2
    done
}
