import { Effect, Layer, Option, Redacted } from "effect"
import type { SettingOverrides } from "../../src/app/Settings.ts"
import { CampaignsConfig, type CampaignSettings } from "../../src/outreach/campaigns/CampaignsConfig.ts"
import { CampaignWorker } from "../../src/outreach/campaigns/CampaignWorker.ts"
import { Mailer } from "../../src/outreach/mail/Mailer.ts"
import { Delivery } from "../../src/outreach/messages/Delivery.ts"
import { OutreachConfig, type OutreachSettings } from "../../src/outreach/messages/OutreachConfig.ts"
import { TrackingSecret } from "../../src/outreach/messages/TrackingSecret.ts"
import { onLiveClock } from "./SchedulerTest.ts"
import { testServer } from "./TestServer.ts"

export const testMailLeaseMs = 120_000
export const testRetryBaseMs = 60_000

/** The sender every test campaign mails from unless it names its own. */
export const testMailFrom = "Shop <news@shop.example>"

/** Settings of the campaign worker under test: no background loops (tests call it), known lease. */
export const testCampaignSettings = (overrides: Partial<CampaignSettings> = {}) =>
  CampaignsConfig.layerWith({ enabled: false, leaseMs: testMailLeaseMs, ...overrides })

/** The delivery step over the mailer at `smtpUrl` (or `mailer`), with a known retry wait. */
export const testDelivery = (
  smtpUrl: string,
  overrides: Partial<OutreachSettings> = {},
  mailer: Layer.Layer<Mailer> = smtpMailer(smtpUrl)
) =>
  Delivery.layer.pipe(
    Layer.provideMerge(TrackingSecret.layer),
    Layer.provideMerge(mailer),
    Layer.provideMerge(OutreachConfig.layerWith({ retryBaseMs: testRetryBaseMs, ...overrides }))
  )

/** A `Mailer` over the SMTP server at `url` (the loopback server of `test/support/SmtpServer.ts`). */
export const smtpMailer = (url: string) =>
  Mailer.smtp({ url: Redacted.make(url), from: testMailFrom, ratePerSecond: 0, dkim: Option.none(), poolSize: 2 })

/**
 * `inner` counting the messages in flight (started: recorded as in flight, the server's answer not yet
 * back); `most` keeps the most there ever were at once.
 */
export const countingInFlight = (inner: Layer.Layer<Mailer>, most: { value: number }) =>
  Layer.effect(Mailer, Effect.gen(function*() {
    const mailer = yield* Mailer
    let inFlight = 0
    return {
      ...mailer,
      sendStarting: (message, start) =>
        Effect.suspend(() => {
          let started = false
          const counted = Effect.tap(start, (go) =>
            Effect.sync(() => {
              started = go
              if (go) most.value = Math.max(most.value, ++inFlight)
            }))
          return Effect.ensuring(mailer.sendStarting(message, counted), Effect.sync(() => void (started && inFlight--)))
        })
    }
  })).pipe(Layer.provide(inner))

/** Another `CampaignWorker` over the same services: a second process's worker, for races. */
export const anotherWorker = Effect.provide(CampaignWorker.use(Effect.succeed), CampaignWorker.layer, { local: true })

/**
 * The test server plus a `CampaignWorker` over the same storage that mails
 * through the SMTP server at `smtpUrl`; the service runs on `TestClock`.
 */
export const campaignTestServer = <A, E>(
  storage: Layer.Layer<A, E>,
  smtpUrl: string,
  delivery: Partial<OutreachSettings> = {},
  settings: SettingOverrides = {},
  worker: { readonly campaign?: Partial<CampaignSettings>; readonly mailer?: Layer.Layer<Mailer> } = {}
) =>
  CampaignWorker.layer.pipe(
    Layer.provideMerge(testDelivery(smtpUrl, delivery, worker.mailer)),
    Layer.provideMerge(testCampaignSettings(worker.campaign)),
    Layer.provideMerge(testServer(onLiveClock(storage), { publicBaseUrl: "https://mail.example.test", mail: { from: testMailFrom }, ...settings }))
  )

/** Sender polls until one claims nothing; answers how many recipients this worker claimed. */
export const drainSender = (worker: CampaignWorker["Service"]) =>
  Effect.gen(function*() {
    let claimed = 0
    while (true) {
      const count = yield* worker.sendBatch
      if (count === 0) return claimed
      claimed += count
    }
  })
