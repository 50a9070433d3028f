// `/version`: reports a v1.33 server (kubectl.md §3.1; the minor picks the dispatcher binary).

export const SERVER_MAJOR = '1';
export const SERVER_MINOR = '33';
export const GIT_VERSION = 'v1.33.0-kdp';

export function versionInfo() {
  return {
    major: SERVER_MAJOR, minor: SERVER_MINOR, emulationMajor: SERVER_MAJOR,
    emulationMinor: SERVER_MINOR, minCompatibilityMajor: SERVER_MAJOR, minCompatibilityMinor: '32',
    gitVersion: GIT_VERSION, gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean', buildDate: '2025-01-01T00:00:00Z', goVersion: 'go1.24.0',
    compiler: 'gc', platform: 'linux/amd64',
  };
}
