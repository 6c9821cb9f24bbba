import { Layer } from "effect"
import { area } from "../../http/Area.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { InboxApi } from "./Api.ts"
import { ImapPoller } from "./ImapPoller.ts"
import { InboundQueue } from "./InboundQueue.ts"
import { InboundQueueRepo } from "./InboundQueueRepo.ts"
import { InboundSmtp } from "./InboundSmtp.ts"
import { InboxLive } from "./Http.ts"
import { Ingestion } from "./Ingestion.ts"
import { MailboxesRepo } from "./MailboxesRepo.ts"
import { ThreadsRepo } from "./ThreadsRepo.ts"

/**
 * Inbound SMTP (when `INBOUND_SMTP_PORT` is set) and the IMAP poller (unless `INBOX_WORKER=off`), both storing what
 * they receive in the inbound queue, and the worker processing it (unless `INBOX_WORKER=off`).
 */
export const InboxWorkersLive = Layer.mergeAll(InboundSmtp.worker, InboundQueue.worker, ImapPoller.worker).pipe(
  Layer.provide(Layer.mergeAll(InboundSmtp.live, ImapPoller.layer)),
  Layer.provide(Layer.mergeAll(InboundQueue.layer.pipe(Layer.provideMerge(Ingestion.layer)), SecretBox.layer))
)

export const InboxArea = area({
  name: "inbox",
  groups: [InboxApi],
  handlers: [InboxLive],
  repositories: [MailboxesRepo.layer, ThreadsRepo.layer, InboundQueueRepo.layer],
  workers: [InboxWorkersLive]
})
