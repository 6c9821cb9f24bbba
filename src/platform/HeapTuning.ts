import { setFlagsFromString } from "node:v8"

/**
 * V8 settings of the whole process (its database thread too), made before
 * any allocation: `main.ts` imports this module first.
 *
 * Allocation-site pretenuring is off. Loading the service builds thousands
 * of long-lived schemas, layers and contexts through the same Effect
 * internals every request later allocates with, so V8 decides those
 * allocation sites make long-lived objects and allocates them straight into
 * the old generation. A request's objects then die there and, until the next
 * full collection, keep alive everything young they point to: measured at
 * 500 req/s, most of each request's objects were copied and promoted by every
 * scavenge, which took 10–18 ms; without pretenuring, 1–3 ms on requests that
 * call no provider (`npm run bench:gc`).
 *
 * The old generation may grow to twice what the last full collection left
 * before the next one starts. V8 otherwise picks that headroom from how fast
 * it collects, and for this ~85 MB heap picked ~15–20 %: under steady load a
 * full collection every 2–5 s, each costing ~100 ms of slow calls on a
 * two-core machine (docs/benchmarks.md, "session 11").
 */
setFlagsFromString("--no-allocation-site-pretenuring")
setFlagsFromString("--heap-growing-percent=100")
