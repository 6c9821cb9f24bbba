import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll } from "vitest"
import { lockDataDir, startTicksOf } from "../../src/storage/DataDirLock.ts"

/** A live process that has nothing to do with the service, whose pid a stale lock may name after a reboot. */
let unrelated: ChildProcess
const dirs: Array<string> = []

beforeAll(() => {
  unrelated = spawn(process.execPath, ["-e", "setTimeout(() => {}, 600000)"], { stdio: "ignore" })
})
afterAll(() => {
  unrelated.kill("SIGKILL")
  dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }))
})

/** A data folder whose lock file holds `content`, last written at `writtenAt`. */
const folderLockedWith = (content: string, writtenAt = new Date()) => {
  const dir = mkdtempSync(join(tmpdir(), "platform-lock-"))
  dirs.push(dir)
  const lockFile = join(dir, "platform-api.lock")
  writeFileSync(lockFile, content)
  utimesSync(lockFile, writtenAt, writtenAt)
  return { dir, lockFile }
}

const takesOver = (content: string, writtenAt?: Date) =>
  Effect.scoped(Effect.gen(function*() {
    const { dir, lockFile } = folderLockedWith(content, writtenAt)
    yield* lockDataDir(dir)
    expect(readFileSync(lockFile, "utf8")).toBe(`${process.pid} ${startTicksOf(process.pid)}`)
  }))

const refuses = (content: string, writtenAt?: Date) =>
  Effect.gen(function*() {
    const { dir } = folderLockedWith(content, writtenAt)
    const error = yield* Effect.flip(Effect.scoped(lockDataDir(dir)))
    expect(error.message).toBe(`Data folder ${dir} is in use by process ${unrelated.pid}; stop it or choose another DATA_DIR`)
  })

describe("the data-folder lock", () => {
  it.effect("names its holder by pid and start time", () =>
    Effect.gen(function*() {
      expect(startTicksOf(unrelated.pid!)).toMatch(/^\d+$/)
      yield* refuses(`${unrelated.pid} ${startTicksOf(unrelated.pid!)}`)
    }))

  it.effect("is stale when its pid now belongs to a process started at another time", () =>
    takesOver(`${unrelated.pid} 1`))

  it.effect("of an earlier version (pid only), is stale when that pid's process started after the lock was written", () =>
    Effect.gen(function*() {
      yield* takesOver(`${unrelated.pid}`, new Date("2001-01-01T00:00:00Z"))
      yield* refuses(`${unrelated.pid}`)
    }))

  it.effect("is taken over when its process no longer runs", () =>
    takesOver("2147483646 12345"))
})
