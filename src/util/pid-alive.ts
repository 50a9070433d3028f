// Whether a process id names a live process (signal 0: nothing is sent). EPERM means it lives
// under another user. A pid can be reused: callers that must know it is the same process keep
// its start time too (host/process.ts).

export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
