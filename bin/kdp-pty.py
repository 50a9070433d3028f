"""kdp's terminal for `kubectl exec -t` and `tty: true` containers: runs ARGV on a new
pseudo-terminal and relays it.

usage: kdp-pty.py COLS ROWS -- ARGV...
stdin is typed into the terminal, everything the program writes to it goes to stdout, and lines
"COLS ROWS" read from fd 3 resize it (TIOCSWINSZ; the kernel sends SIGWINCH). Exits with the
program's exit code (128+n for a signal n). No shell is involved: ARGV is executed as given.
Python 3.6+ (os.login_tty, 3.11+, is done by hand).
"""
import errno
import fcntl
import os
import select
import time
import struct
import sys
import termios


def set_size(fd, cols, rows):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))


def login_tty(master, slave):
    """os.login_tty (3.11+) for any Python 3: a new session whose controlling terminal is the
    slave, on fds 0-2; nothing else of the relay's is inherited."""
    os.close(master)
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    os.closerange(3, 256)


def write_all(fd, data):
    while data:
        data = data[os.write(fd, data):]


def exit_code(status):
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def main():
    cols, rows = int(sys.argv[1]), int(sys.argv[2])
    sep = sys.argv.index('--')
    opts = sys.argv[3:sep]
    argv = sys.argv[sep + 1:]
    control = b''
    # --await-size MS: the client's terminal size comes first on fd 3 (kubectl exec -t sends it
    # as soon as its streams are up); wait for it, at most MS, so the program starts at that
    # size rather than 80x24 with a resize racing its first `stty size`.
    if len(opts) == 2 and opts[0] == '--await-size':
        deadline = time.monotonic() + int(opts[1]) / 1000.0
        while b'\n' not in control:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                ready, _, _ = select.select([3], [], [], left)
            except (InterruptedError, OSError, ValueError):
                break
            if not ready:
                break
            try:
                data = os.read(3, 4096)
            except OSError:
                data = b''
            if not data:
                break
            control += data
        while b'\n' in control:
            line, control = control.split(b'\n', 1)
            parts = line.split()
            if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                cols, rows = int(parts[0]), int(parts[1])
    # The size is set before the fork: the program sees it from its first instruction, and a
    # resize read from fd 3 can never be overtaken by the initial size.
    master, slave = os.openpty()
    set_size(master, cols or 80, rows or 24)
    pid = os.fork()
    if pid == 0:
        login_tty(master, slave)
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            os.write(2, ('exec: "%s": %s\r\n' % (argv[0], e.strerror)).encode())
            os._exit(127 if e.errno == errno.ENOENT else 126)
    os.close(slave)
    inputs = [0, master]
    try:
        os.fstat(3)
        inputs.append(3)
    except OSError:
        pass
    while True:
        try:
            ready, _, _ = select.select(inputs, [], [])
        except InterruptedError:
            continue
        if master in ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                chunk = b''
            if not chunk:
                break
            write_all(1, chunk)
        # Resizes before input: a size sent before a keystroke applies before it.
        if 3 in ready:
            try:
                data = os.read(3, 4096)
            except OSError:
                data = b''
            if not data:
                inputs.remove(3)
            control += data
            while b'\n' in control:
                line, control = control.split(b'\n', 1)
                parts = line.split()
                if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                    set_size(master, int(parts[0]), int(parts[1]))
        if 0 in ready:
            try:
                data = os.read(0, 65536)
            except OSError:
                data = b''
            if data:
                write_all(master, data)
            else:
                inputs.remove(0)
    _, status = os.waitpid(pid, 0)
    sys.exit(exit_code(status))


main()
