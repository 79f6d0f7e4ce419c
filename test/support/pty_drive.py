"""Drives a program through a real pseudo-terminal for the interactive-session tests.

Usage: python3 pty_drive.py STEPS_JSON -- COMMAND ARGS...
STEPS_JSON is a file holding [{"expect": "regex", "send": "keys", "timeout": seconds}, ...];
"send" may be omitted (only wait), "signal": "INT" sends SIGINT to the child's process group
instead of keys, {"columns": N} resizes the terminal to N columns (the program gets SIGWINCH),
and {"kill": true} ends with SIGKILL. "pause" is the seconds between the match and the keys (0.5
unless given). Every wait is bounded by its timeout.
Prints the whole screen (ANSI sequences removed), then the expectation that failed if one did,
and exits 0, or 3 when an expectation failed;
with PTY_RAW=FILE set, the raw bytes of the screen are also written there (and FILE.resizes gets
the resizes as a JSON list of [bytes read before it, columns], to replay them); with PTY_TIMES=FILE,
the seconds from the fork to each expectation met (a JSON list), for the bench: the time of the
read that brought the bytes completing the match, not of the check (which waits for 50 ms of quiet).
"""
import fcntl, json, os, pty, re, select, signal, struct, sys, termios, time

ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")

def main():
    steps = json.load(open(sys.argv[1]))
    cmd = sys.argv[sys.argv.index("--") + 1:]
    started = time.time()
    met = []
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(cmd[0], cmd)
    # A real terminal has a size; some screens divide by it.
    # PTY_COLS: a narrower terminal for the tests of wrapping (120 columns by default).
    cols = int(os.environ.get("PTY_COLS", "120"))
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, cols, 0, 0))
    screen = b""
    resizes = []
    seen = 0
    # For PTY_TIMES: when each read ended, by the screen's length after it.
    reads = []
    timed = bool(os.environ.get("PTY_TIMES"))
    status = 0
    failed = ""

    def pump(deadline):
        nonlocal screen
        while time.time() < deadline:
            r, _, _ = select.select([fd], [], [], 0.05)
            if not r:
                return True
            try:
                data = os.read(fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            screen += data
            if timed:
                reads.append((len(screen), time.time()))
        return True

    def arrived(pattern, since, fallback):
        # The first read after which the screen already held the match.
        for end, at in reads:
            if pattern.search(ANSI.sub(b"", screen[:end]), since):
                return at
        return fallback

    for step in steps:
        timeout = step.get("timeout", 30)
        deadline = time.time() + timeout
        if "expect" in step:
            pattern = re.compile(step["expect"].encode(), re.S)
            while True:
                alive = pump(min(deadline, time.time() + 0.2))
                clean = ANSI.sub(b"", screen)
                m = pattern.search(clean, seen)
                if m:
                    now = time.time()
                    met.append((arrived(pattern, seen, now) if timed else now) - started)
                    seen = m.end()
                    break
                if time.time() >= deadline or not alive:
                    failed = "EXPECT FAILED (%s after %.1f s): %s\n" % (
                        "the program ended" if not alive else "timed out",
                        time.time() - started,
                        step["expect"],
                    )
                    status = 3
                    break
            if status:
                break
        # By default longer than a question's quiet time (ARM_MS in src/person/ink/screen.ts):
        # a key sent sooner is, rightly, taken for type-ahead and ignored. test/support/pty.ts
        # gives each step its own pause: the quiet time only where the keys answer a question.
        pause = step.get("pause", 0.5)
        if pause > 0:
            time.sleep(pause)
        if step.get("kill"):
            os.kill(pid, signal.SIGKILL)
            break
        if "columns" in step:
            fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, step["columns"], 0, 0))
            resizes.append([len(screen), step["columns"]])
        if "signal" in step:
            os.killpg(os.getpgid(pid), getattr(signal, "SIG" + step["signal"]))
        if "send" in step:
            os.write(fd, step["send"].encode())
    end = time.time() + 20
    code = None
    while time.time() < end:
        pump(time.time() + 0.1)
        done, st = os.waitpid(pid, os.WNOHANG)
        if done != 0:
            code = os.waitstatus_to_exitcode(st)
            break
    if code is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        code = "killed"
    times = os.environ.get("PTY_TIMES")
    if times:
        open(times, "w").write(json.dumps(met))
    raw = os.environ.get("PTY_RAW")
    if raw:
        open(raw, "wb").write(screen)
        open(raw + ".resizes", "w").write(json.dumps(resizes))
    sys.stdout.write(ANSI.sub(b"", screen).decode("utf-8", "replace"))
    sys.stdout.write("\nEXIT: %s\n" % code)
    # Last, so that a test showing the end of the screen shows which expectation failed.
    sys.stdout.write(failed)
    sys.exit(status)

main()
