import { Duration, Effect } from "effect"
import { randomBytes } from "node:crypto"
import { isIP } from "node:net"
import { requireCompany } from "../../auth/Authentication.ts"
import { Authorized } from "../../auth/Policy.ts"
import { newId } from "../../platform/Ids.ts"
import { GuardedFetch } from "../../platform/Outbound.ts"
import { AddressRefused, makeAddressPolicy, OutboundConfig } from "../../platform/OutboundPolicy.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { currentDate } from "../../platform/Time.ts"
import type { EventType } from "../../storage/Outbox.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { Delivery, NewWebhook, Webhook, WebhookPatch } from "./Api.ts"
import { DeliveryNotFound, WebhookInvalid, WebhookNotFound } from "./Errors.ts"
import { type DeliveryRecord, type DeliveryStatus, type WebhookRecord, WebhooksRepo } from "./WebhooksRepo.ts"

/** The event type of a test delivery; no change of the platform emits it. */
export const testEventType = "webhook.test"

export const toWebhook = (record: WebhookRecord): typeof Webhook.Type => ({
  id: record.id,
  url: record.url,
  // Only the API writes events, each one an `EventType`.
  events: record.events as ReadonlyArray<EventType>,
  description: record.description,
  enabled: record.enabled,
  disabledReason: record.disabledReason,
  created: record.createdAt.getTime(),
  updated: record.updatedAt.getTime()
})

export const toDelivery = (record: DeliveryRecord): typeof Delivery.Type => ({
  id: record.id,
  webhookId: record.webhookId,
  eventId: record.eventId,
  event: record.eventType,
  test: record.test,
  status: record.status,
  attempts: record.attempts,
  nextAttemptAt: record.nextAttemptAt?.getTime() ?? null,
  responseStatus: record.responseStatus,
  latencyMs: record.latencyMs,
  responseExcerpt: record.responseExcerpt,
  error: record.error,
  payload: record.payload,
  created: record.createdAt.getTime(),
  updated: record.updatedAt.getTime(),
  deliveredAt: record.deliveredAt?.getTime() ?? null
})

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`

const nameLookupMs = 5_000

/**
 * The URL through the outbound guard's rules: http(s), and no internal
 * address unless `OUTBOUND_ALLOWED_HOSTS` names it, whether given as a literal
 * or as a name that resolves to one. A name that does not resolve now is kept:
 * every delivery is checked again.
 */
const checkedUrl = (raw: string) =>
  Effect.gen(function*() {
    const guard = yield* GuardedFetch
    const url = yield* Effect.mapError(guard.check(raw), (refused) => new WebhookInvalid({ message: `url: ${refused.message}` }))
    if (isIP(url.hostname) !== 0 || url.hostname.startsWith("[")) return url.toString()
    const policy = makeAddressPolicy(yield* OutboundConfig)
    const refused = yield* Effect.tryPromise(() => policy.resolve(url.hostname)).pipe(
      Effect.timeout(Duration.millis(nameLookupMs)),
      Effect.match({
        onSuccess: () => undefined,
        onFailure: (error) => error.cause instanceof AddressRefused ? error.cause.message : undefined
      })
    )
    if (refused !== undefined) return yield* new WebhookInvalid({ message: `url: Refused to deliver to ${url.origin}: ${refused}` })
    return url.toString()
  })

const uniqueEvents = (events: ReadonlyArray<EventType>) => [...new Set(events)]

/** The caller's company (404 for another one) once the permission was checked. */
const companyOf = (companyId: string | undefined) =>
  Effect.flatMap(Authorized("webhooks:manage"), () => Effect.map(requireCompany(companyId), (principal) => principal.companyId))

const foundWebhook = (id: string) => orRefuse(() => new WebhookNotFound({ id }))

export const create = Effect.fn("Webhooks.create")(function*(input: typeof NewWebhook.Type) {
  const companyId = yield* companyOf(input.companyId)
  const url = yield* checkedUrl(input.url)
  const now = yield* currentDate
  const secret = newSecret()
  const id = newId("whk")
  const sealed = yield* SecretBox.use((box) => box.seal(secret, id))
  const created = yield* WebhooksRepo.use((repo) =>
    repo.create({
      id,
      companyId,
      url,
      events: uniqueEvents(input.events),
      description: input.description ?? null,
      enabled: input.enabled ?? true,
      disabledReason: null,
      secret: sealed,
      lastSuccessAt: null,
      createdAt: now,
      updatedAt: now
    })
  )
  return { ...toWebhook(created), secret }
})

export const list = Effect.fn("Webhooks.list")(function*(request: PageRequest) {
  const companyId = yield* companyOf(undefined)
  const { rows, total } = yield* WebhooksRepo.use((repo) => repo.list(companyId, windowOf(request)))
  return toPage(rows.map(toWebhook), total, request)
})

export const get = Effect.fn("Webhooks.get")(function*(id: string) {
  const companyId = yield* companyOf(undefined)
  return toWebhook(yield* foundWebhook(id)(yield* WebhooksRepo.use((repo) => repo.get(companyId, id))))
})

export const update = Effect.fn("Webhooks.update")(function*(id: string, patch: typeof WebhookPatch.Type) {
  const companyId = yield* companyOf(undefined)
  const url = patch.url === undefined ? undefined : yield* checkedUrl(patch.url)
  const now = yield* currentDate
  const updated = yield* WebhooksRepo.use((repo) =>
    repo.update(companyId, id, {
      url,
      events: patch.events === undefined ? undefined : uniqueEvents(patch.events),
      description: patch.description,
      enabled: patch.enabled
    }, now)
  )
  return toWebhook(yield* foundWebhook(id)(updated))
})

export const remove = Effect.fn("Webhooks.remove")(function*(id: string) {
  const companyId = yield* companyOf(undefined)
  return toWebhook(yield* foundWebhook(id)(yield* WebhooksRepo.use((repo) => repo.remove(companyId, id))))
})

/** The webhook of the caller's company, or 404. */
const ownWebhook = (id: string) =>
  Effect.gen(function*() {
    const companyId = yield* companyOf(undefined)
    return yield* foundWebhook(id)(yield* WebhooksRepo.use((repo) => repo.get(companyId, id)))
  })

export const deliveries = Effect.fn("Webhooks.deliveries")(function*(
  webhookId: string,
  status: typeof DeliveryStatus.Type | undefined,
  request: PageRequest
) {
  const webhook = yield* ownWebhook(webhookId)
  const { rows, total } = yield* WebhooksRepo.use((repo) => repo.deliveries(webhook.companyId, webhook.id, status, windowOf(request)))
  return toPage(rows.map(toDelivery), total, request)
})

export const retry = Effect.fn("Webhooks.retry")(function*(webhookId: string, deliveryId: string) {
  const webhook = yield* ownWebhook(webhookId)
  const now = yield* currentDate
  const retried = yield* WebhooksRepo.use((repo) => repo.retry(webhook.companyId, webhook.id, deliveryId, now))
  return toDelivery(yield* orRefuse(() => new DeliveryNotFound({ id: deliveryId }))(retried))
})

export const test = Effect.fn("Webhooks.test")(function*(webhookId: string) {
  const webhook = yield* ownWebhook(webhookId)
  const now = yield* currentDate
  const eventId = newId("evt")
  const queued = yield* WebhooksRepo.use((repo) =>
    repo.enqueue({
      id: newId("whd"),
      webhookId: webhook.id,
      companyId: webhook.companyId,
      eventId,
      eventType: testEventType,
      payload: { webhookId: webhook.id, message: "A test delivery from the platform" },
      eventAt: now,
      test: true,
      status: "pending",
      attempts: 0,
      nextAttemptAt: now,
      leaseToken: null,
      leaseUntil: null,
      responseStatus: null,
      responseExcerpt: null,
      latencyMs: null,
      error: null,
      deliveredAt: null,
      createdAt: now,
      updatedAt: now
    })
  )
  return toDelivery(queued)
})
