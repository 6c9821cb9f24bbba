import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { SettingOverrides } from "../../src/app/Settings.ts"
import nodemailer from "nodemailer"
import { CampaignWorker } from "../../src/outreach/campaigns/CampaignWorker.ts"
import { RecipientsRepo } from "../../src/outreach/campaigns/RecipientsRepo.ts"
import { InboundQueue } from "../../src/outreach/inbox/InboundQueue.ts"
import { InboundSmtp } from "../../src/outreach/inbox/InboundSmtp.ts"
import { Ingestion } from "../../src/outreach/inbox/Ingestion.ts"
import type { OutreachSettings } from "../../src/outreach/messages/OutreachConfig.ts"
import { campaignTestServer, drainSender, testMailFrom } from "./CampaignWorkerTest.ts"
import { smtpServer } from "./SmtpServer.ts"
import { client, seedTenant } from "./TestServer.ts"

/**
 * The inbox under test: the service with a campaign worker mailing through
 * the loopback SMTP sink at `sinkUrl`, the ingestion path, the inbound queue
 * (no worker: tests process what was accepted with `processAccepted`) and
 * inbound SMTP (tests listen with `InboundSmtp.listen(0, "127.0.0.1")`).
 */
export const inboxTestServer = <A, E>(
  storage: Layer.Layer<A, E>,
  sinkUrl: string,
  settings: SettingOverrides = {},
  delivery: Partial<OutreachSettings> = {}
) =>
  InboundSmtp.layer.pipe(
    Layer.provideMerge(InboundQueue.layer),
    Layer.provideMerge(Ingestion.layer),
    Layer.provideMerge(campaignTestServer(storage, sinkUrl, delivery, settings))
  )

/** The inbound SMTP server under test (listening on a free loopback port) and the sink the service mails to. */
export class Inbound extends Context.Service<Inbound, {
  readonly port: number
  readonly sink: Effect.Success<ReturnType<typeof smtpServer>>
}>()("test/Inbound") {}

/** `inboxTestServer` with inbound SMTP listening and every outgoing message (campaigns, replies) going to one sink. */
export const inboundTestServer = <A, E>(storage: Layer.Layer<A, E>, settings: SettingOverrides = {}, delivery: Partial<OutreachSettings> = {}) =>
  Layer.unwrap(Effect.map(smtpServer(), (sink) =>
    Layer.effect(Inbound, InboundSmtp.use((smtp) => Effect.map(smtp.listen(0, "127.0.0.1"), ({ port }) => ({ port, sink }))).pipe(Effect.orDie)).pipe(
      Layer.provideMerge(inboxTestServer(storage, sink.url, {
        mail: { from: testMailFrom, smtpUrl: Option.some(Redacted.make(sink.url)) },
        ...settings
      }, delivery))
    )))

/** Processes every message inbound SMTP accepted so far (what the inbound queue's worker does). */
export const processAccepted = InboundQueue.use((queue) => queue.processPending)

/** Sends `raw` to the inbound server under test for `to`, then processes what was accepted. */
export const deliver = (to: string, raw: Buffer, from = "someone@example.net") =>
  Effect.tap(Inbound.use(({ port }) => smtpSend(port, { from, to: [to] }, raw)), () => processAccepted)

/** The shared address the test campaigns mail from (`MAIL_FROM`). */
export const sharedAddress = "news@shop.example"

/** A tenant whose campaign was sent to `emails`: its client and each recipient's Message-ID. */
export const sentCampaign = (emails: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const tenant = yield* seedTenant()
    const api = yield* client({ apiKey: tenant.apiKey })
    const list = yield* api.lists.create({ payload: { name: "Prospects", rows: emails.map((email) => ({ email })) } })
    const campaign = yield* api.campaigns.create({
      payload: { name: "Intro", subject: "Quick question", bodyDocument: { html: "<p>Would you like a demo?</p>" }, listId: list.id }
    })
    yield* api.campaigns.send({ params: { campaignId: campaign.id }, payload: null })
    yield* drainSender(yield* CampaignWorker)
    const page = yield* RecipientsRepo.use((repo) => repo.page(campaign.id, undefined, { offset: 0, limit: 100 }))
    const messageIds = new Map(page.rows.map((row) => [row.email, row.messageId!]))
    return { tenant, api, campaign, messageIds }
  })

export interface RawMail {
  readonly from: string
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly inReplyTo?: string
  readonly messageId?: string
  readonly headers?: Record<string, string>
}

/** A plain RFC 5322 message. */
export const rawMail = (mail: RawMail) =>
  Buffer.from([
    `From: ${mail.from}`,
    `To: ${mail.to}`,
    `Subject: ${mail.subject}`,
    `Date: ${new Date().toUTCString()}`,
    `Message-ID: ${mail.messageId ?? `<${crypto.randomUUID()}@sender.example>`}`,
    ...(mail.inReplyTo === undefined ? [] : [`In-Reply-To: ${mail.inReplyTo}`, `References: ${mail.inReplyTo}`]),
    ...Object.entries(mail.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    mail.text,
    ""
  ].join("\r\n"))

/** Sends `raw` over SMTP to the inbound server on `port`; answers the server's reply or its refusal. */
export const smtpSend = (port: number, envelope: { readonly from: string; readonly to: ReadonlyArray<string> }, raw: Buffer) =>
  Effect.promise(async () => {
    const transport = nodemailer.createTransport({ host: "127.0.0.1", port, secure: false, ignoreTLS: true })
    try {
      const info = await transport.sendMail({ envelope: { from: envelope.from, to: [...envelope.to] }, raw })
      return { accepted: true as const, response: info.response }
    } catch (error) {
      const failure = error as { readonly responseCode?: number; readonly response?: string; readonly message: string }
      return { accepted: false as const, code: failure.responseCode, response: failure.response ?? failure.message }
    } finally {
      transport.close()
    }
  })
