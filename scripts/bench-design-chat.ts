/**
 * The design chat's speed with a stubbed model: a scripted OpenAI-compatible
 * upstream on loopback plays a 10-edit conversation (10 tool rounds, each one
 * `set_text`, then a closing sentence), and the whole service (in-memory
 * PGlite) streams it to a client that parses the events with
 * eventsource-parser. Measured per chat: time to the first event and events
 * per second over the whole chat (every edit is a saved body version). The
 * baseline, in the same run: the upstream's own 11 streams read directly
 * (what the model alone takes).
 *
 * `npm run bench:design-chat`; `BENCH_CHATS` (default 20) chats.
 */
import { NodeRuntime } from "@effect/platform-node"
import { Effect, Layer, Option, Redacted } from "effect"
import { inMemoryStorage } from "../src/app/Storage.ts"
import { postJson, streamChat } from "../test/support/DesignChatClient.ts"
import { loopbackServer, serverUrl } from "../test/support/LoopbackServer.ts"
import { type ScriptedTurn, startScriptedUpstream } from "../test/support/ScriptedUpstream.ts"
import { seedTenant } from "../test/support/TestServer.ts"
import { numberFromEnv } from "./bench/env.ts"
import { fixed, formatTable, integer, writeResults } from "./bench/report.ts"
import { median } from "./bench/stats.ts"

const chats = numberFromEnv("BENCH_CHATS", 20)
const edits = 10

const script: ReadonlyArray<ScriptedTurn> = [
  ...Array.from({ length: edits }, (_, index): ScriptedTurn => ({
    text: `Editing paragraph ${index + 1}.`,
    toolCalls: [{ name: "set_text", arguments: { selector: `p.p${index}`, text: `New text ${index + 1} for {{firstName}}` } }]
  })),
  { text: "All ten paragraphs are updated." }
]

const html = `<html><body><table role="presentation"><tr><td><h1>Title</h1>${
  Array.from({ length: edits }, (_, index) => `<p class="p${index}">Paragraph ${index}</p>`).join("")
}</td></tr></table></body></html>`

interface Run {
  readonly firstEventMs: number
  readonly totalMs: number
  readonly events: number
}

const summarise = (name: string, runs: ReadonlyArray<Run>) => [
  name,
  fixed(median(runs.map((run) => run.firstEventMs))),
  fixed(median(runs.map((run) => run.totalMs))),
  integer(median(runs.map((run) => run.events))),
  integer(median(runs.map((run) => run.events / (run.totalMs / 1000))))
]

/** The upstream alone: the 11 rounds' streams read straight from the stub, one after the other. */
const upstreamAlone = (url: string) =>
  Effect.promise(async () => {
    const started = performance.now()
    let first = 0
    let events = 0
    for (let round = 0; round <= edits; round++) {
      const response = await fetch(`${url}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "scripted", stream: true, messages: [{ role: "user", content: "x" }] })
      })
      const text = await response.text()
      if (first === 0) first = performance.now() - started
      events += text.split("\n\n").filter((block) => block.startsWith("data:")).length
    }
    return { firstEventMs: first, totalMs: performance.now() - started, events }
  })

const benchmark = (label: string) =>
  Effect.gen(function*() {
    const tenant = yield* seedTenant("bench-design")
    const base = yield* serverUrl
    const created = yield* Effect.promise(() =>
      postJson(base, tenant.apiKey, "/api/v0/marketing-campaigns", { name: "Bench", subject: "Hi", bodyDocument: { html } }))
    const runs: Array<Run> = []
    for (let chat = 0; chat < chats; chat++) {
      yield* Effect.promise(() => upstream.then((stub) => stub.play(script)))
      const started = performance.now()
      let first = 0
      const answer = yield* Effect.promise(() =>
        streamChat(base, tenant.apiKey, `/api/v0/marketing-campaigns/${created.body.id}/chat`, {
          message: "Rewrite every paragraph",
          bodyDocument: { html }
        }, {
          leaveAfter: () => {
            if (first === 0) first = performance.now() - started
            return false
          }
        }))
      const last = answer.events.at(-1)
      if (last?.event !== "done") return yield* Effect.die(new Error(`chat ended with ${JSON.stringify(last)}`))
      runs.push({ firstEventMs: first, totalMs: performance.now() - started, events: answer.events.length })
    }
    return summarise(label, runs.slice(1))
  })

const upstream = startScriptedUpstream()

const serverWith = <A, E>(storage: Layer.Layer<A, E>) =>
  Layer.unwrap(Effect.promise(() =>
    upstream.then((stub) =>
      loopbackServer(storage, {
        llmModels: Option.some([{ id: "designer", provider: "openai", upstream: "scripted" }]),
        openaiBaseUrl: Option.some(stub.openaiUrl),
        openaiApiKey: Option.some(Redacted.make("bench")),
        llmMaxRetries: 0,
        design: { model: "designer", maxRounds: edits + 1 },
        rateLimitPerMinute: 1_000_000
      })
    )
  ))

NodeRuntime.runMain(Effect.gen(function*() {
  const startedAt = new Date()
  const stub = yield* Effect.promise(() => upstream)
  const baseline: Array<Run> = []
  for (let run = 0; run < chats; run++) {
    stub.play(script)
    baseline.push(yield* upstreamAlone(stub.openaiUrl))
  }
  const rows = [
    summarise("upstream alone (11 streams)", baseline.slice(1)),
    yield* Effect.provide(benchmark("design chat, in-memory PGlite"), serverWith(inMemoryStorage))
  ]
  const header = ["run", "first event ms (p50)", "chat ms (p50)", "events", "events/s (p50)"]
  yield* Effect.sync(() => {
    process.stdout.write(`${edits}-edit chat, ${chats - 1} measured chats each (first one warms up)\n`)
    process.stdout.write(`${formatTable(header, rows)}\n`)
    writeResults("design-chat", startedAt, { header, rows })
  })
  yield* Effect.promise(() => stub.close())
}))
