import { Layer } from "effect"
import { area } from "../http/Area.ts"
import { InboxApi } from "./Api.ts"
import { InboundSmtp } from "./InboundSmtp.ts"
import { InboxLive } from "./Http.ts"
import { Ingestion } from "./Ingestion.ts"
import { MailboxesRepo } from "./MailboxesRepo.ts"
import { ThreadsRepo } from "./ThreadsRepo.ts"

/** Inbound SMTP (when `INBOUND_SMTP_PORT` is set) over the one ingestion path. */
export const InboxWorkersLive = InboundSmtp.worker.pipe(
  Layer.provide(InboundSmtp.layer),
  Layer.provide(Ingestion.layer)
)

export const InboxArea = area({
  name: "inbox",
  groups: [InboxApi],
  handlers: [InboxLive],
  repositories: [MailboxesRepo.layer, ThreadsRepo.layer],
  workers: [InboxWorkersLive]
})
