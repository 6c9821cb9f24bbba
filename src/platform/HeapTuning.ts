import { setFlagsFromString } from "node:v8"

/**
 * Turns off V8's allocation-site pretenuring, for the whole process (its
 * database thread too). Loading the service builds thousands of long-lived
 * schemas, layers and contexts through the same Effect internals every
 * request later allocates with, so V8 decides those allocation sites make
 * long-lived objects and allocates them straight into the old generation.
 * A request's objects then die there and, until the next full collection,
 * keep alive everything young they point to: measured at 500 req/s, most of
 * each request's objects were copied and promoted by every scavenge, which
 * took 10–18 ms; without pretenuring, 1–3 ms on requests that call no
 * provider (`npm run bench:gc`). Imported first by `main.ts`, before any
 * allocation site exists.
 */
setFlagsFromString("--no-allocation-site-pretenuring")
