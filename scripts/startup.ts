// `npm run bench:startup`: how long the built server (`node dist/main.js`)
// takes from spawn until `/health` answers 200, its resident memory then and
// once it has idled a while (and its peak over both), on an empty and on an
// existing embedded data folder (and on PostgreSQL when a URL is set), next to
// a raw `node:http` server. See docs/benchmarks.md.
import { cpus, loadavg } from "node:os"
import { makeTempDir, runScript } from "./bench/children.ts"
import { postgresFromEnv, postgresNotSet, throwawayDatabase } from "./bench/databases.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer, writeResults } from "./bench/report.ts"
import { ensureBuilt, memoryOf, type PlatformOptions, type Server, startBaseline, startPlatform } from "./bench/servers.ts"
import { spread } from "./bench/stats.ts"

const runs = numberFromEnv("STARTUP_RUNS", 3)
const pgliteIdleTargetMb = 300
const postgresIdleTargetMb = 150
/** How long a started server idles before its settled memory is read. */
const idleSeconds = numberFromEnv("STARTUP_IDLE_SECONDS", 40)

interface Start {
  readonly readyMs: number
  /** VmHWM at the end of the idle window: start-up and whatever the first seconds of idling add. */
  readonly peakRssMb: number | undefined
  /** VmRSS when /health first answered. */
  readonly readyRssMb: number | undefined
  /** VmRSS after `idleSeconds` without requests. */
  readonly idleRssMb: number | undefined
  readonly unansweredProbes: number
}

interface Scenario {
  readonly name: string
  /** The most idle RSS (MiB) the issue allows this kind of start (issue 8: 300 on PGlite, 150 on PostgreSQL). */
  readonly idleTargetMb?: number
  /** Prepares what one measured start needs (outside the measured time) and answers how to start. */
  readonly prepare: () => Promise<() => Promise<Server>>
}

const measureStart = async (start: () => Promise<Server>, idleFor = idleSeconds): Promise<Start> => {
  const server = await start()
  const ready = memoryOf(server.child.pid)
  await new Promise((resolve) => setTimeout(resolve, idleFor * 1000))
  const idle = memoryOf(server.child.pid)
  await server.child.stop()
  return {
    readyMs: server.readyMs,
    peakRssMb: idle?.peakRssMb,
    readyRssMb: ready?.rssMb,
    idleRssMb: idle?.rssMb,
    unansweredProbes: server.unansweredProbes
  }
}

/** A folder the server has already initialised, migrated and bootstrapped once. */
const initialisedDataDir = async () => {
  const dataDir = makeTempDir("platform-startup-data-")
  await measureStart(() => startPlatform({ dataDir }), 0)
  return dataDir
}

/** A database the server has already migrated once. */
const migratedDatabase = async (postgresUrl: string) => {
  const { url } = await throwawayDatabase(postgresUrl)
  await measureStart(() => startPlatform({ databaseUrl: url }), 0)
  return url
}

/** Runs `make` on first use only, so that no preparation overlaps a measured start. */
const once = <A>(make: () => Promise<A>) => {
  let made: Promise<A> | undefined
  return () => (made ??= make())
}

const scenarios = (postgresUrl: string | undefined): ReadonlyArray<Scenario> => {
  const platform = (options: PlatformOptions) => () => startPlatform(options)
  const existingDir = once(initialisedDataDir)
  const pglite: ReadonlyArray<Scenario> = [
    { name: "raw node:http (reference)", prepare: async () => startBaseline },
    {
      name: "pglite, empty data folder",
      idleTargetMb: pgliteIdleTargetMb,
      prepare: async () => platform({ dataDir: makeTempDir("platform-startup-data-") })
    },
    { name: "pglite, existing data folder", idleTargetMb: pgliteIdleTargetMb, prepare: async () => platform({ dataDir: await existingDir() }) }
  ]
  if (postgresUrl === undefined) return pglite
  const migrated = once(() => migratedDatabase(postgresUrl))
  return [
    ...pglite,
    {
      name: "postgres, empty database",
      idleTargetMb: postgresIdleTargetMb,
      prepare: async () => platform({ databaseUrl: (await throwawayDatabase(postgresUrl)).url })
    },
    { name: "postgres, migrated database", idleTargetMb: postgresIdleTargetMb, prepare: async () => platform({ databaseUrl: await migrated() }) }
  ]
}

/** Met when every start settled at or under the target. */
const idleTarget = (targetMb: number, starts: ReadonlyArray<Start>) =>
  starts.every((start) => start.idleRssMb !== undefined && start.idleRssMb <= targetMb) ? "met" : "MISSED"

runScript(async () => {
  const startedAt = new Date()
  const loadBefore = loadavg()[0]
  const postgres = postgresFromEnv()
  ensureBuilt()
  const results = []
  for (const scenario of scenarios(postgres?.url)) {
    const starts: Array<Start> = []
    for (let run = 0; run < runs; run++) {
      starts.push(await measureStart(await scenario.prepare()))
      process.stderr.write(`${scenario.name}: ready in ${integer(starts[run].readyMs)} ms\n`)
    }
    results.push({ scenario: scenario.name, idleTargetMb: scenario.idleTargetMb, starts })
  }

  console.log(`\nStart-up of the built server (node dist/main.js), ${runs} start(s) each; Node ${process.version}, ` +
    `${cpus().length} CPUs, load average before: ${fixed(loadBefore, 2)}`)
  console.log(postgres === undefined
    ? postgresNotSet
    : `PostgreSQL: throwaway databases on the server of ${postgres.source}`)
  const range = (stats: ReturnType<typeof spread>) => (stats === undefined ? "-" : `${integer(stats.min)}–${integer(stats.max)}`)
  console.log(formatTable(
    ["scenario", "ready ms (median)", "ready ms (range)", "RSS MiB at ready", "idle RSS MiB", "idle RSS (range)", "peak RSS MiB", "unanswered probes", "idle target"],
    results.map(({ idleTargetMb, scenario, starts }) => {
      const ready = spread(starts.map((start) => start.readyMs))
      const median = (values: ReadonlyArray<number | undefined>) => {
        const stats = spread(values)
        return stats === undefined ? "-" : integer(stats.median)
      }
      return [
        scenario,
        ready === undefined ? "-" : integer(ready.median),
        range(ready),
        median(starts.map((start) => start.readyRssMb)),
        median(starts.map((start) => start.idleRssMb)),
        range(spread(starts.map((start) => start.idleRssMb))),
        median(starts.map((start) => start.peakRssMb)),
        String(starts.reduce((total, start) => total + start.unansweredProbes, 0)),
        idleTargetMb === undefined ? "-" : `≤ ${idleTargetMb} MiB: ${idleTarget(idleTargetMb, starts)}`
      ]
    })
  ))
  console.log(`ready: from spawn until /health (or / for the reference) answered 200; RSS at ready: VmRSS then; ` +
    `idle RSS: VmRSS after ${idleSeconds} s without requests (STARTUP_IDLE_SECONDS); peak RSS: VmHWM at that point; ` +
    "unanswered probes: start-up requests the server accepted but never answered")
  console.log(`results: ${writeResults("startup", startedAt, { startedAt: startedAt.toISOString(), node: process.version, runs, idleSeconds, loadAverageBefore: loadBefore, postgresSource: postgres?.source ?? null, results })}`)
})
