import { Data, Effect } from "effect"
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs"
import { join } from "node:path"

export class StorageStartError extends Data.TaggedError("StorageStartError")<{ readonly message: string }> {}

/** One file-system step of start-up; a failure ends the start with its message. */
export const fsStep = <A>(step: () => A) =>
  Effect.try({ try: step, catch: (error) => new StorageStartError({ message: String(error) }) })

/**
 * When process `pid` started, in clock ticks since boot (field 22 of
 * `/proc/<pid>/stat`); undefined when it does not run or there is no /proc.
 * A pid is reused by later processes, a pid with its start time is not.
 */
export const startTicksOf = (pid: number): string | undefined => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // the command name (field 2) may hold spaces and parentheses: count fields after its closing one
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]
  } catch {
    return undefined
  }
}

/** Clock ticks per second of /proc's times: 100 on every Linux the service runs on. */
const ticksPerSecond = 100

/** The wall-clock instant (ms) `ticks` after boot. */
const instantOfTicks = (ticks: string) => {
  const bootSeconds = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))?.[1])
  return bootSeconds * 1000 + (Number(ticks) * 1000) / ticksPerSecond
}

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/** What the lock file holds: this process's id and start time. */
const lockContent = () => `${process.pid} ${startTicksOf(process.pid) ?? ""}`.trim()

/**
 * The live process holding the lock, if any. The lock names a pid and its
 * start time; a process now running under that pid but started at another
 * time only reuses the number, and the lock is stale. A lock written by an
 * earlier version names the pid alone: a process started after the lock was
 * written cannot have written it (1 s of slack for the boot time's rounding).
 */
const holderOf = (lockFile: string, content: string): number | undefined => {
  const [pidText, ticks] = content.trim().split(/\s+/)
  const pid = Number(pidText)
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !isRunning(pid)) return undefined
  const running = startTicksOf(pid)
  if (running === undefined) return pid
  if (ticks !== undefined) return ticks === running ? pid : undefined
  return instantOfTicks(running) <= statSync(lockFile).mtimeMs + 1000 ? pid : undefined
}

/** Creates the lock file naming this process; false when one exists already. */
const createLock = (lockFile: string) =>
  fsStep(() => {
    try {
      const fd = openSync(lockFile, "wx")
      writeSync(fd, lockContent())
      closeSync(fd)
      return true
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false
      throw error
    }
  })

/**
 * Takes the data folder for this process alone: PGlite is a single-process
 * database, and two processes writing one folder would corrupt it. A lock
 * left by a process that no longer runs is taken over.
 */
export const lockDataDir = (dataDir: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const lockFile = join(dataDir, "platform-api.lock")
      yield* fsStep(() => mkdirSync(dataDir, { recursive: true }))
      for (let attempt = 0; attempt < 2; attempt++) {
        if (yield* createLock(lockFile)) return lockFile
        const holder = yield* fsStep(() => holderOf(lockFile, readFileSync(lockFile, "utf8")))
        if (holder !== undefined) {
          return yield* new StorageStartError({
            message: `Data folder ${dataDir} is in use by process ${holder}; stop it or choose another DATA_DIR`
          })
        }
        yield* fsStep(() => rmSync(lockFile, { force: true }))
      }
      return yield* new StorageStartError({ message: `Could not lock data folder ${dataDir}` })
    }),
    (lockFile) => Effect.sync(() => rmSync(lockFile, { force: true }))
  )
