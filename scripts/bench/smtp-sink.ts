// The SMTP sink of the mail benchmarks: an `smtp-server` in a child process
// that accepts every message and counts deliveries per address, so a run can
// count duplicates and messages never delivered (even across a kill -9 of the
// sender). Run as a script, this file is the sink itself.
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { SMTPServer } from "smtp-server"

export interface SinkReport {
  readonly messages: number
  readonly unique: number
  readonly duplicates: number
  /** The sink's own CPU time (user + system) since it was last reset, in milliseconds. */
  readonly cpuMs: number
  /** Every address delivered to, when asked for `addresses`. */
  readonly delivered?: ReadonlyArray<string>
}

const runSink = () => {
  const perAddress = new Map<string, number>()
  let messages = 0
  let cpuAtReset = process.cpuUsage()
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    maxClients: 1_000,
    onData(stream, session, callback) {
      stream.on("data", () => undefined)
      stream.on("end", () => {
        messages += 1
        for (const rcpt of session.envelope.rcptTo) perAddress.set(rcpt.address, (perAddress.get(rcpt.address) ?? 0) + 1)
        callback(null)
      })
    }
  })
  // A sender killed mid-session (the kill -9 runs) resets its connections: the sink keeps serving the others.
  server.on("error", () => undefined)
  server.listen(0, "127.0.0.1", () => {
    const address = server.server.address()
    process.stdout.write(`${typeof address === "object" && address !== null ? address.port : 0}\n`)
  })
  createInterface({ input: process.stdin }).on("line", (line) => {
    if (line === "reset") {
      perAddress.clear()
      messages = 0
      cpuAtReset = process.cpuUsage()
    }
    const duplicates = [...perAddress.values()].reduce((sum, n) => sum + n - 1, 0)
    const delivered = line === "addresses" ? [...perAddress.keys()] : undefined
    const cpu = process.cpuUsage(cpuAtReset)
    const cpuMs = (cpu.user + cpu.system) / 1000
    process.stdout.write(`${JSON.stringify({ messages, unique: perAddress.size, duplicates, cpuMs, delivered })}\n`)
  })
}

/** Reads a child's standard output line by line. */
export const lineReader = (child: ChildProcess) => {
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  return async () => {
    const line = await lines.next()
    if (line.done === true) throw new Error("a child process ended early")
    return line.value
  }
}

/** Starts the sink for the scope: its `smtp://` URL, and its counts (`report`), cleared by `reset`. */
export const startSink = Effect.acquireRelease(
  Effect.promise(async () => {
    const child = spawn(process.execPath, [import.meta.filename], { stdio: ["pipe", "pipe", "inherit"] })
    const next = lineReader(child)
    const port = Number(await next())
    const ask = (command: string) =>
      Effect.promise(async (): Promise<SinkReport> => {
        child.stdin!.write(`${command}\n`)
        return JSON.parse(await next())
      })
    return { child, url: `smtp://127.0.0.1:${port}`, report: ask("report"), reset: ask("reset"), addresses: ask("addresses") }
  }),
  ({ child }) => Effect.sync(() => child.kill())
)

export type Sink = Effect.Success<typeof startSink>

if (process.argv[1] === import.meta.filename) runSink()
