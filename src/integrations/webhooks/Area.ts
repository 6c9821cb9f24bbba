import { area } from "../../http/Area.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { WebhooksApi } from "./Api.ts"
import { DeliveriesRepo } from "./DeliveriesRepo.ts"
import { DeliveryWorkerLive } from "./DeliveryWorker.ts"
import { WebhooksLive } from "./Http.ts"
import { WebhooksRepo } from "./WebhooksRepo.ts"

export const WebhooksArea = area({
  name: "webhooks",
  groups: [WebhooksApi],
  handlers: [WebhooksLive],
  repositories: [WebhooksRepo.layer, DeliveriesRepo.layer, SecretBox.layer],
  workers: [DeliveryWorkerLive]
})
