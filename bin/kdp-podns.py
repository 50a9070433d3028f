#!/usr/bin/env python3
# The pod's namespace holder (netns runtime, src/kubelet/pod-mounts.ts). Started as
#   nsenter --net=/run/netns/POD -- unshare --mount --uts --ipc --propagation private -- \
#     python3 kdp-podns.py --hostname H [--overlay DIR UPPER WORK]... [--bind SRC DST]...
#     [--ro-bind SRC DST]...
# it is the first process of the pod's new mount, UTS and IPC namespaces (mount propagation
# private: nothing done here reaches the host's mounts). It sets the hostname, puts an overlay
# over each DIR (writes land in the pod's UPPER directory, the host's files are the lower layer),
# bind-mounts each SRC at DST (creating DST inside the overlays when missing; read-only for
# --ro-bind; sources are opened first, so no bind hides another's), prints "ready", and becomes `sleep infinity`: containers and exec join its
# namespaces with `nsenter --target PID`. Any failure: a message on stderr and exit code 1.
# Arguments are an argument array from kdp; no shell is involved.

import ctypes
import os
import socket
import sys

MS_RDONLY = 1
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384

libc = ctypes.CDLL(None, use_errno=True)
libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]


def mount(src, dst, fstype, flags, data):
    enc = lambda s: s.encode() if s is not None else None
    if libc.mount(enc(src), enc(dst), enc(fstype), flags, enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f'mount {src} -> {dst}: {os.strerror(err)}')


def main(argv):
    hostname = None
    overlays, binds = [], []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == '--hostname':
            hostname = argv[i + 1]
            i += 2
        elif a == '--overlay':
            overlays.append(argv[i + 1:i + 4])
            i += 4
        elif a in ('--bind', '--ro-bind'):
            binds.append((argv[i + 1], argv[i + 2], a == '--ro-bind'))
            i += 3
        else:
            raise ValueError(f'unknown argument {a!r}')
    if hostname:
        socket.sethostname(hostname)
    # Every source is opened first, on the host's own tree: before the first bind (a bind may
    # hide the sources of later ones) and before the overlays (a source under /tmp opened
    # through the pod's /tmp overlay would be the overlay's view of it, which does not follow
    # later changes on the host, so a volume the kubelet rewrites would look frozen).
    opened = [(os.open(src, os.O_PATH), os.path.isdir(src), src, dst, ro) for src, dst, ro in binds]
    for d, upper, work in overlays:
        for p in (d, upper, work):
            if ',' in p or ':' in p:
                raise ValueError(f'overlay path {p!r} holds a comma or colon')
        mount('overlay', d, 'overlay', 0, f'lowerdir={d},upperdir={upper},workdir={work}')
    for fd, isdir, src, dst, ro in opened:
        if isdir:
            os.makedirs(dst, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if not os.path.exists(dst):
                open(dst, 'a').close()
        mount(f'/proc/self/fd/{fd}', dst, None, MS_BIND | MS_REC, None)
        os.close(fd)
        if ro:
            mount(None, dst, None, MS_BIND | MS_REMOUNT | MS_RDONLY, None)
    sys.stdout.write('ready\n')
    sys.stdout.flush()
    os.execvp('sleep', ['sleep', 'infinity'])


if __name__ == '__main__':
    try:
        main(sys.argv[1:])
    except Exception as e:  # noqa: BLE001 - the runtime reports the message
        sys.stderr.write(f'kdp-podns: {e}\n')
        sys.exit(1)
