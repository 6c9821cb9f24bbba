import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Authentication } from "../../auth/Authentication.ts"
import { described } from "../../http/Describe.ts"
import { BadRequest, Forbidden, NotFound } from "../../platform/Errors.ts"
import { Page, PageQuery } from "../../platform/Pagination.ts"
import { JsonObject, NonBlankText, Text } from "../../platform/Schemas.ts"
import { EventType } from "../../storage/Outbox.ts"
import { DeliveryStatus } from "./WebhooksRepo.ts"

/** A webhook as the API shows it; the secret is never shown again after creation. */
export const Webhook = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(EventType),
  description: Schema.NullOr(Schema.String),
  enabled: Schema.Boolean,
  /** Why the platform turned it off (deliveries kept failing); null otherwise. */
  disabledReason: Schema.NullOr(Schema.String),
  created: Schema.Number,
  updated: Schema.Number
}).annotate({ identifier: "Webhook" })

/** The answer of a creation: the webhook and its signing secret, shown this once. */
export const CreatedWebhook = Schema.Struct({ ...Webhook.fields, secret: Schema.String }).annotate({ identifier: "CreatedWebhook" })

/** One event for one webhook, with what its last attempt got back. */
export const Delivery = Schema.Struct({
  id: Schema.String,
  webhookId: Schema.String,
  /** The `webhook-id` header: the same on every attempt, for the receiver to drop repeats. */
  eventId: Schema.String,
  event: Schema.String,
  test: Schema.Boolean,
  status: DeliveryStatus,
  attempts: Schema.Int,
  nextAttemptAt: Schema.NullOr(Schema.Number),
  responseStatus: Schema.NullOr(Schema.Int),
  latencyMs: Schema.NullOr(Schema.Int),
  responseExcerpt: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  payload: JsonObject,
  created: Schema.Number,
  updated: Schema.Number,
  deliveredAt: Schema.NullOr(Schema.Number)
}).annotate({ identifier: "WebhookDelivery" })

const Url = NonBlankText(2048)
const Events = Schema.Array(EventType).check(Schema.isMinLength(1), Schema.isMaxLength(50))
const Description = Text(500)

export const NewWebhook = Schema.Struct({
  url: Url,
  events: Events,
  description: Schema.optional(Description),
  enabled: Schema.optional(Schema.Boolean),
  companyId: Schema.optional(Schema.String)
})

export const WebhookPatch = Schema.Struct({
  url: Schema.optional(Url),
  events: Schema.optional(Events),
  description: Schema.optional(Schema.NullOr(Description)),
  enabled: Schema.optional(Schema.Boolean)
})

export const DeliveryQuery = { ...PageQuery, status: Schema.optional(DeliveryStatus) }

const webhookId = { webhookId: Schema.String }
const deliveryId = { webhookId: Schema.String, deliveryId: Schema.String }
const notFound = { 404: "for an unknown id or another company's webhook" }

export class WebhooksApi extends HttpApiGroup.make("webhooks").add(
  HttpApiEndpoint.post("create", "/webhooks", {
    payload: NewWebhook,
    success: CreatedWebhook.pipe(HttpApiSchema.status(201)),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Create a webhook",
    does: "Subscribes `url` to `events` (see docs/webhooks.md). Answers the webhook with its signing `secret` (`whsec_…`, Standard Webhooks), " +
      "shown this once. The URL must be http(s) and reachable through the outbound guard: a private, loopback, link-local or metadata address " +
      "that `OUTBOUND_ALLOWED_HOSTS` does not name is refused.",
    who: "webhooks:manage",
    errors: { 400: "naming the invalid field, or why the URL is refused" }
  })),
  HttpApiEndpoint.get("list", "/webhooks", { query: PageQuery, success: Page(Webhook), error: [BadRequest, Forbidden] }).pipe(described({
    summary: "List webhooks",
    does: "The company's webhooks, newest first, paginated.",
    who: "webhooks:manage"
  })),
  HttpApiEndpoint.get("get", "/webhooks/:webhookId", { params: webhookId, success: Webhook, error: [Forbidden, NotFound] }).pipe(described({
    summary: "Get a webhook",
    does: "One webhook; `disabledReason` says why the platform turned it off, if it did.",
    who: "webhooks:manage",
    errors: notFound
  })),
  HttpApiEndpoint.patch("update", "/webhooks/:webhookId", {
    params: webhookId,
    payload: WebhookPatch,
    success: Webhook,
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "Change a webhook",
    does: "Changes the URL (checked as at creation), events, description (null clears it) or `enabled`; turning it on again clears `disabledReason` " +
      "and lets its waiting deliveries go.",
    who: "webhooks:manage",
    errors: notFound
  })),
  HttpApiEndpoint.delete("delete", "/webhooks/:webhookId", { params: webhookId, success: Webhook, error: [Forbidden, NotFound] }).pipe(described({
    summary: "Delete a webhook",
    does: "Deletes the webhook with its deliveries and answers it.",
    who: "webhooks:manage",
    errors: notFound
  })),
  HttpApiEndpoint.get("listDeliveries", "/webhooks/:webhookId/deliveries", {
    params: webhookId,
    query: DeliveryQuery,
    success: Page(Delivery),
    error: [BadRequest, Forbidden, NotFound]
  }).pipe(described({
    summary: "List a webhook's deliveries",
    does: "The delivery log, newest first, test deliveries included: event, status (`pending`, `delivered`, `failed`), attempts, " +
      "the last answer's status code, latency and first 500 characters, and the last error; filter `status`.",
    who: "webhooks:manage",
    errors: notFound
  })),
  HttpApiEndpoint.post("retryDelivery", "/webhooks/:webhookId/deliveries/:deliveryId/retry", {
    params: deliveryId,
    success: Delivery,
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Retry a delivery",
    does: "Makes the delivery due now (`pending`), whatever its status; the worker sends it again with the same `webhook-id`.",
    who: "webhooks:manage",
    errors: { 404: "for an unknown webhook or delivery, or another company's" }
  })),
  HttpApiEndpoint.post("test", "/webhooks/:webhookId/test", {
    params: webhookId,
    success: Delivery.pipe(HttpApiSchema.status(201)),
    error: [Forbidden, NotFound]
  }).pipe(described({
    summary: "Send a test delivery",
    does: "Queues a signed `webhook.test` event for this webhook (even a disabled one) and answers the pending delivery; " +
      "its outcome shows in the delivery log.",
    who: "webhooks:manage",
    errors: notFound
  }))
).annotateMerge(OpenApi.annotations({
  description: "Webhooks: signed HTTP callbacks (Standard Webhooks) for what happens in a company, retried for about a day.",
  override: { "x-displayName": "Webhooks" }
})).middleware(Authentication).prefix("/api/v0") {}
