// The V8 flags kdp runs with. `bin/kdp.js` carries them on its `#!` line (V8 cannot switch
// them once running, and NODE_OPTIONS refuses them); a kdp that starts another kdp (`up -d`)
// passes them on, and the benchmarks start their kdp processes with them.
//
// --single-threaded-gc: no GC helper threads. kdp is one process doing everything on small lab
// machines (2 cores here, shared with pods, kube-proxy tools and the clients); helper threads
// there compete with the event loop and the clients instead of overlapping with idle cores.
// Measured on the API server at 50 clients (bench/apiserver-http.ts, 4 interleaved pairs): p99
// 14.8-18.6 ms with it, 18.0-26.9 ms without; CPU per create the same.

export const KDP_NODE_FLAGS: readonly string[] = ['--single-threaded-gc'];
