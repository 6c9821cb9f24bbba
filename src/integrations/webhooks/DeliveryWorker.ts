import { Cause, Clock, Context, Effect, Layer, Random } from "effect"
import { Webhook } from "standardwebhooks"
import { pollForever, whileLeased } from "../../platform/LeasedWork.ts"
import { GuardedFetch } from "../../platform/Outbound.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { currentDate } from "../../platform/Time.ts"
import { type Answer, type AttemptOutcome, DeliveriesRepo, type DeliveryClaim } from "./DeliveriesRepo.ts"
import { WebhooksConfig, type WebhooksSettings } from "./WebhooksConfig.ts"

/** How much of a receiver's answer the delivery log keeps. */
const excerptLength = 500

/** Events one poll moves from the outbox to deliveries. */
const fanOutBatch = 500

/**
 * The wait before attempt `attempts + 1`: `WEBHOOKS_RETRY_BASE_MS` doubling
 * per attempt up to `WEBHOOKS_RETRY_MAX_MS`, times a random 0.8–1.2 so that
 * the retries of many deliveries that failed together spread out.
 */
export const retryDelayMs = (settings: WebhooksSettings, attempts: number, random: number) =>
  Math.round(Math.min(settings.retryBaseMs * 2 ** (attempts - 1), settings.retryMaxMs) * (0.8 + 0.4 * random))

/** The body of a delivery, in the Standard Webhooks shape. */
export const deliveryBody = (claim: DeliveryClaim) =>
  JSON.stringify({ type: claim.delivery.eventType, timestamp: claim.delivery.eventAt.toISOString(), data: claim.delivery.payload })

const excerpt = (body: Uint8Array) =>
  new TextDecoder().decode(body.subarray(0, excerptLength * 4)).replaceAll("\u0000", "").slice(0, excerptLength)

/**
 * The webhook delivery worker, in the scheduler's pattern: each poll fans the
 * event outbox out into deliveries, then claims due deliveries with a lease
 * (processes sharing one database never hold the same one, so exactly one
 * attempt of a delivery is in flight), renews the lease while the attempt
 * runs, and records its outcome only while the lease is still held. Each
 * attempt is signed (Standard Webhooks: `webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) and goes through the outbound guard, which checks the
 * address again every time. A failed attempt is retried with exponential
 * backoff and jitter; after `WEBHOOKS_MAX_ATTEMPTS` (about a day) the
 * delivery is `failed`, and its webhook is turned off, with the reason, when
 * nothing reached it since that delivery began. A process killed mid-attempt
 * leaves its lease to expire; the delivery is then attempted again with the
 * same `webhook-id`, which receivers use to drop a repeat.
 */
export class DeliveryWorker extends Context.Service<DeliveryWorker, {
  /** One poll: fans out the outbox, claims due deliveries, attempts them; answers how much it found. */
  readonly runDue: Effect.Effect<number>
}>()("webhooks/DeliveryWorker") {
  static readonly layer = Layer.effect(DeliveryWorker, Effect.gen(function*() {
    const config = yield* WebhooksConfig
    const repo = yield* DeliveriesRepo
    const guard = yield* GuardedFetch
    const box = yield* SecretBox
    /** Secrets are sealed bound to their webhook; ones stored before sealing began are still plain `whsec_…`. */
    const signingSecret = (claim: DeliveryClaim) =>
      claim.secret.startsWith("whsec_") ? Effect.succeed(claim.secret) : box.open(claim.secret, claim.delivery.webhookId)
    const leaseUntil = (now: Date) => new Date(now.getTime() + config.leaseMs)

    const afterFailure = (claim: DeliveryClaim, answer: Answer) =>
      Effect.gen(function*() {
        const { attempts, id } = claim.delivery
        if (attempts < config.maxAttempts) {
          const now = yield* currentDate
          const delay = retryDelayMs(config, attempts, yield* Random.next)
          return { _tag: "Retry", answer, at: new Date(now.getTime() + delay) } satisfies AttemptOutcome
        }
        const why = answer.responseStatus === null ? answer.error : `status ${answer.responseStatus}`
        const disable = `Delivery ${id} failed ${attempts} times over about a day (last: ${why}), and nothing was delivered since it began`
        return { _tag: "Failed", answer, disable } satisfies AttemptOutcome
      })

    const attempt = (claim: DeliveryClaim) =>
      Effect.gen(function*() {
        const body = deliveryBody(claim)
        const sentAt = yield* currentDate
        const started = yield* Clock.currentTimeMillis
        const secret = yield* Effect.result(signingSecret(claim))
        if (secret._tag === "Failure") {
          return yield* afterFailure(claim, { responseStatus: null, responseExcerpt: null, latencyMs: 0, error: `The signing secret: ${secret.failure.message}` })
        }
        const signature = new Webhook(secret.success).sign(claim.delivery.eventId, sentAt, body)
        const answered = yield* Effect.result(guard.fetch(claim.url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": claim.delivery.eventId,
            "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
            "webhook-signature": signature
          },
          body
        }))
        const latencyMs = (yield* Clock.currentTimeMillis) - started
        if (answered._tag === "Failure") {
          return yield* afterFailure(claim, { responseStatus: null, responseExcerpt: null, latencyMs, error: answered.failure.message })
        }
        const page = answered.success
        const answer = { responseStatus: page.status, responseExcerpt: excerpt(page.body), latencyMs, error: null }
        if (page.status >= 200 && page.status < 300) return { _tag: "Delivered", answer } satisfies AttemptOutcome
        return yield* afterFailure(claim, { ...answer, error: `The receiver answered ${page.status}` })
      })

    const handle = (claim: DeliveryClaim) =>
      Effect.gen(function*() {
        const outcome = yield* attempt(claim)
        const recorded = yield* repo.finish(claim, outcome, yield* currentDate)
        if (!recorded) yield* Effect.logWarning("Webhook delivery lease lost before its outcome was recorded", { deliveryId: claim.delivery.id })
      }).pipe(
        whileLeased(claim.delivery.id, config.leaseMs, Effect.flatMap(currentDate, (now) => repo.renew(claim, leaseUntil(now)))),
        Effect.catchTag("LeaseLost", (lost) => Effect.logWarning("Webhook delivery lease lost", lost)),
        // A failure of storage leaves the lease to expire: the delivery is attempted again, never lost.
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("Webhook delivery failed unexpectedly", { deliveryId: claim.delivery.id, cause })
        )
      )

    return {
      runDue: Effect.gen(function*() {
        const fanned = yield* repo.fanOut(yield* currentDate, fanOutBatch)
        const now = yield* currentDate
        const claims = yield* repo.claim(now, leaseUntil(now), config.concurrency)
        yield* Effect.forEach(claims, handle, { concurrency: "unbounded", discard: true })
        return claims.length + fanned.events
      })
    }
  }))

  /** The background worker of a server process: polls every `WEBHOOKS_POLL_MS`, at once again while a poll found work. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* WebhooksConfig
    if (!config.workerEnabled) return
    const worker = yield* DeliveryWorker
    yield* pollForever({ name: "Webhook deliveries", poll: worker.runDue, batch: 1, pollMs: config.pollMs })
    yield* Effect.logInfo("Webhook delivery worker started", { pollMs: config.pollMs, concurrency: config.concurrency })
  }))
}

/** The worker with its settings from the environment and the outbound guard; needs storage and `OutboundConfig`. */
export const DeliveryWorkerLive = DeliveryWorker.worker.pipe(
  Layer.provide(DeliveryWorker.layer),
  Layer.provide(GuardedFetch.layer),
  Layer.provide(WebhooksConfig.layer)
)
