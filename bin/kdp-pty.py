"""kdp's terminal for `kubectl exec -t`: runs ARGV on a new pseudo-terminal and relays it.

usage: kdp-pty.py COLS ROWS -- ARGV...
stdin is typed into the terminal, everything the program writes to it goes to stdout, and lines
"COLS ROWS" read from fd 3 resize it (the kernel sends SIGWINCH). Exits with the program's exit
code (128+n for a signal). No shell is involved: ARGV is executed as given.
"""
import fcntl
import os
import select
import struct
import sys
import termios


def set_size(fd, cols, rows):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', rows, cols, 0, 0))


def main():
    cols, rows = int(sys.argv[1]), int(sys.argv[2])
    argv = sys.argv[sys.argv.index('--') + 1:]
    master, slave = os.openpty()
    set_size(master, cols or 80, rows or 24)
    pid = os.fork()
    if pid == 0:
        os.close(master)
        os.login_tty(slave)
        try:
            os.execvp(argv[0], argv)
        except OSError as e:
            os.write(2, f'exec: "{argv[0]}": {e.strerror}\r\n'.encode())
            os._exit(127)
    os.close(slave)
    inputs = [0, master]
    try:
        os.fstat(3)
        inputs.append(3)
    except OSError:
        pass
    control = b''
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
            os.write(1, chunk)
        if 0 in ready:
            data = os.read(0, 65536)
            if data:
                os.write(master, data)
            else:
                inputs.remove(0)
        if 3 in ready:
            data = os.read(3, 4096)
            if not data:
                inputs.remove(3)
            control += data
            while b'\n' in control:
                line, control = control.split(b'\n', 1)
                parts = line.split()
                if len(parts) == 2:
                    set_size(master, int(parts[0]), int(parts[1]))
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


main()
