import { area } from "../http/Area.ts"
import { InboxApi } from "./Api.ts"
import { InboxLive } from "./Http.ts"
import { MailboxesRepo } from "./MailboxesRepo.ts"
import { ThreadsRepo } from "./ThreadsRepo.ts"

export const InboxArea = area({
  name: "inbox",
  groups: [InboxApi],
  handlers: [InboxLive],
  repositories: [MailboxesRepo.layer, ThreadsRepo.layer]
})
