// `npm run bench:inbox`: inbound SMTP ingestion against a bare `smtp-server` sink, in the same run and process.
// BENCH_INBOX_MESSAGES replies (default 2,000) to as many sent campaign messages go over BENCH_INBOX_CONNECTIONS
// pooled SMTP connections (default 4) first to a sink that only reads each message, then to the service's inbound
// SMTP (stored raw before each 250, then processed by the inbound queue's worker: parsed with mailparser, threaded
// by In-Reply-To to the campaign recipient, classified by the offline model, stored, counted as replied, the lead
// moved), on PGlite in a temporary folder, then (when a PostgreSQL URL is set, see scripts/bench/databases.ts) on a
// throwaway PostgreSQL database. The service's clock stops when the last reply is linked to its thread, not at the
// last 250. It reports messages per second of each, their ratio, the SQL statements and transactions per message,
// and how many threads came out linked to their recipient.
import { NodeHttpServer } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import nodemailer from "nodemailer"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"
import * as Admin from "../src/accounts/admin/Admin.ts"
import { makeServer } from "../src/app/Server.ts"
import { settingsWith } from "../src/app/Settings.ts"
import { newDraft } from "../src/outreach/campaigns/Campaigns.ts"
import { CampaignsRepo } from "../src/outreach/campaigns/CampaignsRepo.ts"
import { readInbound } from "../src/outreach/inbox/InboundMail.ts"
import { InboundQueue } from "../src/outreach/inbox/InboundQueue.ts"
import { InboundSmtp } from "../src/outreach/inbox/InboundSmtp.ts"
import { Ingestion } from "../src/outreach/inbox/Ingestion.ts"
import { newId } from "../src/platform/Ids.ts"
import { makeTempDir, runScript } from "./bench/children.ts"
import { pgliteStorageIn, postgresFromEnv, postgresNotSet, postgresStorage, throwawayDatabase } from "./bench/databases.ts"
import { numberFromEnv } from "./bench/env.ts"
import { statementCounter } from "./bench/statements.ts"

const messageCount = numberFromEnv("BENCH_INBOX_MESSAGES", 2_000)
const connections = numberFromEnv("BENCH_INBOX_CONNECTIONS", 4)
const listStatements = process.env.BENCH_INBOX_STATEMENTS === "1"
const from = "Bench <bench@bench.example>"
const shared = "bench@bench.example"

/** A tenant with a sent campaign of `count` recipients; answers each recipient's address and Message-ID. */
export const seedFor = (count: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tenant = yield* Admin.bootstrap({ organization: "Bench", company: "Bench", email: `b${Date.now()}@bench.example` })
    const now = new Date()
    const campaign = yield* CampaignsRepo.use((repo) =>
      repo.create(newDraft(tenant.companyId, tenant.userId, { name: "Bench", subject: "Quick question", bodyDocument: { html: "<p>Hi</p>" } }, now), "api"))
    const prefix = newId("rcp")
    yield* sql`INSERT INTO campaign_recipients (id, campaign_id, company_id, list_row_id, email, fields, status, message_id, sent_at, created_at, updated_at)
      SELECT ${prefix} || lpad(to_hex(g), 8, '0'), ${campaign.id}, ${tenant.companyId}, 'row' || g, 'user' || g || '@example.com', '{}'::jsonb,
        'sent', '<' || ${prefix} || lpad(to_hex(g), 8, '0') || '@bench.example>', ${now}, ${now}, ${now}
      FROM generate_series(1, ${count}) AS g`
    yield* sql`INSERT INTO campaign_recipient_counts (campaign_id, total, sent) VALUES (${campaign.id}, ${count}, ${count})`
    const rows = yield* sql<{ readonly email: string; readonly message_id: string }>`SELECT email, message_id FROM campaign_recipients WHERE campaign_id = ${campaign.id}`
    return { companyId: tenant.companyId, replies: rows.map((row) => ({ email: row.email, messageId: row.message_id })) }
  }).pipe(Effect.orDie)

export const replyFor = (reply: { readonly email: string; readonly messageId: string }, index: number) =>
  Buffer.from([
    `From: Contact ${index} <${reply.email}>`,
    `To: ${shared}`,
    "Subject: Re: Quick question",
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: <reply-${index}-${Date.now()}@example.com>`,
    `In-Reply-To: ${reply.messageId}`,
    `References: ${reply.messageId}`,
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    index % 3 === 0 ? "Sounds interesting, tell me more about the pricing." : index % 3 === 1 ? "No thanks, not interested." : "Thanks, I'll think about it.",
    "",
    "On Mon, Jun 1, 2026 at 8:00 AM Bench <bench@bench.example> wrote:",
    "> Hi, would you like a demo of our product?",
    ""
  ].join("\r\n"))

/**
 * Sends every message over `connections` pooled connections, then waits for `settled` (the last one processed);
 * answers messages per second of wall time and per second of this process's CPU time (both threads: the
 * database's and the rest), which a machine shared with other work leaves comparable.
 */
const blast = async (port: number, messages: ReadonlyArray<Buffer>, settled: () => Promise<void> = async () => undefined) => {
  const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true, pool: true, maxConnections: connections, maxMessages: Infinity })
  const started = performance.now()
  const cpuBefore = process.cpuUsage()
  let failed = 0
  await Promise.all(messages.map((raw) =>
    transport.sendMail({ envelope: { from: "contact@example.com", to: [shared] }, raw }).catch(() => void failed++)))
  const acknowledged = (performance.now() - started) / 1000
  await settled()
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage(cpuBefore)
  transport.close()
  if (failed > 0) throw new Error(`${failed} messages were refused`)
  return { perSecond: messages.length / seconds, perCpuSecond: messages.length / ((cpu.user + cpu.system) / 1e6), acknowledgedPerSecond: messages.length / acknowledged }
}

/** A bare smtp-server that reads each message and accepts it: the ceiling of SMTP alone. */
const bareSink = () =>
  new Promise<{ readonly port: number; readonly close: () => void }>((resolve) => {
    const server = new SMTPServer({
      secure: false,
      authOptional: true,
      disabledCommands: ["AUTH", "STARTTLS"],
      logger: false,
      size: 25 * 1024 * 1024,
      onData(stream, _session, callback) {
        stream.on("data", () => undefined)
        stream.on("end", () => callback(null, "Message accepted"))
      }
    })
    server.listen(0, "127.0.0.1", () => resolve({ port: (server.server.address() as AddressInfo).port, close: () => server.close() }))
  })

const program = (backend: string, counter: ReturnType<typeof statementCounter>) => Effect.gen(function*() {
  const { companyId, replies } = yield* seedFor(messageCount * 2)
  const warmUp = replies.slice(messageCount, messageCount + 200).map((reply, index) => replyFor(reply, messageCount + index))
  const measured = replies.slice(0, messageCount).map(replyFor)
  const inbound = yield* InboundSmtp.use((smtp) => smtp.listen(0, "127.0.0.1")).pipe(Effect.orDie)
  const sink = yield* Effect.promise(bareSink)
  const sql = yield* SqlClient.SqlClient
  // Not counted with the ingestion's statements: the tracer is off for it.
  const linkedCount = sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM inbox_threads
    WHERE company_id = ${companyId} AND campaign_recipient_id IS NOT NULL`.pipe(Effect.map((rows) => rows[0]!.n), Effect.orDie, Effect.withTracerEnabled(false))
  const run = Effect.runPromiseWith(yield* Effect.context<never>())
  /** Resolves once `count` replies are linked to their thread, looking every 5 ms. */
  const linked = (count: number) => async () => {
    while (await run(linkedCount) < count) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  // Both warmed up (the JIT, the database's caches), then measured one after the other in the same process.
  yield* Effect.promise(() => blast(sink.port, warmUp))
  yield* Effect.promise(() => blast(inbound.port, warmUp, linked(warmUp.length)))
  const sinkRate = yield* Effect.promise(() => blast(sink.port, measured))
  counter.reset()
  const ingestRate = yield* Effect.promise(() => blast(inbound.port, measured, linked(warmUp.length + messageCount)))
  const { statements, transactions } = counter.counts
  sink.close()
  const linkedAtEnd = yield* linkedCount
  // mailparser alone over the same messages: the part of the ingestion's CPU time that parsing takes.
  const parseStarted = process.cpuUsage()
  for (const raw of measured) yield* Effect.orDie(readInbound(raw))
  const parseCpu = process.cpuUsage(parseStarted)
  const microsPer = (perCpuSecond: number) => (1e6 / perCpuSecond).toFixed(0)
  const [classified] = yield* sql<{ readonly n: number }>`SELECT count(DISTINCT classification)::int AS n FROM inbox_messages WHERE company_id = ${companyId}`
  yield* Console.log([
    `Inbound SMTP ingestion, ${messageCount} replies over ${connections} connections, ${backend} (same run, same process):`,
    `  bare smtp-server sink: ${sinkRate.perSecond.toFixed(0)} messages/s (${sinkRate.perCpuSecond.toFixed(0)} per CPU second)`,
    `  ingestion (accept, then parse, thread, classify, store, count replied, move the lead; until the last is linked): ${ingestRate.perSecond.toFixed(0)} messages/s (${ingestRate.perCpuSecond.toFixed(0)} per CPU second)`,
    `  of which acknowledged (250, stored raw): ${ingestRate.acknowledgedPerSecond.toFixed(0)} messages/s (${(100 * ingestRate.acknowledgedPerSecond / sinkRate.perSecond).toFixed(1)} % of the sink)`,
    `  ratio: ${(100 * ingestRate.perSecond / sinkRate.perSecond).toFixed(1)} % of the sink (${(100 * ingestRate.perCpuSecond / sinkRate.perCpuSecond).toFixed(1)} % per CPU second)`,
    `  CPU per message (this process): sink ${microsPer(sinkRate.perCpuSecond)} µs, ingestion ${microsPer(ingestRate.perCpuSecond)} µs, of which mailparser alone ${((parseCpu.user + parseCpu.system) / messageCount).toFixed(0)} µs`,
    `  per message: ${(statements / messageCount).toFixed(1)} SQL statements in ${(transactions / messageCount).toFixed(1)} transactions`,
    `  threads linked to their campaign recipient: ${linkedAtEnd} of ${messageCount + warmUp.length} replies; ${classified!.n} distinct classes`
  ].join("\n"))
  if (listStatements) {
    const ranked = [...counter.texts].sort((a, b) => b[1].count - a[1].count)
    for (const [text, { count, ms }] of ranked) {
      yield* Console.log(`  ${(count / messageCount).toFixed(2)} × ${(ms / count).toFixed(2)} ms ${text.slice(0, 140)}`)
    }
  }
})

/** The service's inbound SMTP over `storage`, its statements counted. */
const measureOn = (backend: string, storage: ReturnType<typeof pgliteStorageIn>) => {
  const counter = statementCounter({ byText: listStatements })
  const services = Layer.merge(InboundSmtp.live, InboundQueue.worker).pipe(
    Layer.provideMerge(InboundQueue.layer),
    Layer.provideMerge(Ingestion.layer),
    Layer.provideMerge(makeServer(NodeHttpServer.layer(createServer, { host: "127.0.0.1", port: 0 }), storage, { logAddress: false })),
    Layer.provideMerge(settingsWith({ logLevel: "Error", bootstrap: false, mail: { from } })),
    Layer.provide(counter.layer)
  )
  return Effect.runPromise(Effect.scoped(program(backend, counter)).pipe(Effect.provide(services)))
}

if (import.meta.main) {
  runScript(async () => {
    await measureOn("PGlite", pgliteStorageIn(makeTempDir("bench-inbox-")))
    const postgres = postgresFromEnv()
    if (postgres === undefined) return console.log(postgresNotSet)
    await measureOn("PostgreSQL", postgresStorage((await throwawayDatabase(postgres.url)).url))
  })
}
