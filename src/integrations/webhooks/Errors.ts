import { plainRefusal, refusal } from "../../platform/Refusal.ts"

/** No webhook with this id in the company. */
export class WebhookNotFound extends refusal("NotFound", "WebhookNotFound", ({ id }: { readonly id: string }) => `Webhook ${id} not found`) {}

/** No delivery with this id for the webhook. */
export class DeliveryNotFound extends refusal("NotFound", "DeliveryNotFound", ({ id }: { readonly id: string }) => `Delivery ${id} not found`) {}

/** A webhook that cannot be kept as asked: a URL the outbound guard refuses, a repeated event. */
export class WebhookInvalid extends plainRefusal("Invalid", "WebhookInvalid") {}
