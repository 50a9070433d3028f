"""Runs argv on a pseudo-terminal of a given size (kubectl -t needs a real terminal).

usage: pty-run.py COLS ROWS NEW_COLS NEW_ROWS INPUT -- ARGV...
After the first output it resizes the terminal to NEW_COLS x NEW_ROWS (the kernel sends
SIGWINCH), then types INPUT. Prints everything the program wrote; exits with its exit code.
No shell is involved.
"""
import fcntl
import os
import select
import struct
import sys
import termios
import time


def set_size(fd, cols, rows):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))


def main():
    cols, rows, new_cols, new_rows = (int(x) for x in sys.argv[1:5])
    text = sys.argv[5].encode()
    argv = sys.argv[sys.argv.index('--') + 1:]
    fd, slave = os.openpty()
    set_size(fd, cols, rows)
    pid = os.fork()
    if pid == 0:
        os.close(fd)
        os.login_tty(slave)
        os.execv(argv[0], argv)
    os.close(slave)
    out = b''
    typed = False
    started = time.time()
    deadline = started + 20
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        if not typed and (out or time.time() - started > 1.5):
            time.sleep(0.5)
            set_size(fd, new_cols, new_rows)
            time.sleep(0.5)
            os.write(fd, text)
            typed = True
    _, status = os.waitpid(pid, 0)
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    sys.exit(os.waitstatus_to_exitcode(status))


main()
