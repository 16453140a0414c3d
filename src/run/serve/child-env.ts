// The environment of the processes Sealpost starts itself (serve's serving
// processes, dev's devnet/pind/domaind children).
//
// glibc's malloc gives each thread that allocates its own arena, up to
// eight per core. A Node process allocates from V8's helper threads and
// libuv's pool (file writes, crypto, DNS) as well as the main thread, and
// memory freed in one arena is rarely handed back while others hold live
// blocks: a serving process's resident size crept up by about 170 MB over
// 5,000 deliveries with the JavaScript heap flat (bench part soak). Two
// arenas keep it flat at no measurable cost in throughput. glibc reads the
// variable when a process starts, so it is set for the children; an
// operator's own MALLOC_ARENA_MAX wins.
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2', ...extra };
}
