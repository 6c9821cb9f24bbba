import { Effect, Option } from "effect"
import { isIP } from "node:net"
import { requireCompany } from "../../auth/Authentication.ts"
import { makeAddressPolicy, OutboundConfig } from "../../platform/OutboundPolicy.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { newId } from "../../platform/Ids.ts"
import { type PageRequest, toPage } from "../../platform/Pagination.ts"
import { orRefuse } from "../../platform/Refusal.ts"
import { currentDate } from "../../platform/Time.ts"
import { windowOf } from "../../storage/Windows.ts"
import type { Mailbox, MailboxPatch, NewMailbox } from "./Api.ts"
import { InvalidMailbox, MailboxNotFound } from "./Errors.ts"
import { type MailboxRecord, MailboxesRepo, type ServerRecord } from "./MailboxesRepo.ts"

/**
 * Mailboxes: a company's own e-mail accounts, read by the IMAP poller and
 * used to send answers. Passwords are sealed (`SecretBox`, bound to the
 * mailbox and server) before they are stored and never leave the service. Creating one checks its fields only: a host given as an
 * internal IP literal is refused unless `OUTBOUND_ALLOWED_HOSTS` allows it;
 * names are resolved and checked again at every connection (the poller's and
 * the sender's socket lookups go through the same policy).
 */

export const toMailbox = (record: MailboxRecord): typeof Mailbox.Type => ({
  id: record.id,
  companyId: record.companyId,
  email: record.email,
  displayName: record.displayName,
  imap: record.imap,
  smtp: record.smtp,
  dailyLimit: record.dailyLimit,
  status: record.status,
  lastError: record.lastError,
  created_date: record.createdAt,
  updated_date: record.updatedAt
})

type ServerInput = typeof NewMailbox.Type["imap"]

const bare = (host: string) => host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host

/** What a server's password is sealed for: it opens for that mailbox's server only. */
export const passwordContext = (mailboxId: string, which: "imap" | "smtp") => `mailbox:${mailboxId}:${which}`

/** The server's settings to store, its password sealed; an internal IP literal not allowed → `InvalidMailbox`. */
const serverOf = (mailboxId: string, which: "imap" | "smtp", input: ServerInput) =>
  Effect.gen(function*() {
    const policy = makeAddressPolicy(yield* OutboundConfig)
    const host = bare(input.host)
    const reason = isIP(host) === 0 ? undefined : policy.refusal(host, host)
    if (reason !== undefined) return yield* new InvalidMailbox({ message: `${which}.host is refused: ${reason}` })
    const box = yield* SecretBox
    const server: ServerRecord = { host: input.host.toLowerCase(), port: input.port, secure: input.secure, user: input.user }
    return { server, password: yield* box.seal(input.password, passwordContext(mailboxId, which)) }
  })

const found = (id: string) => orRefuse(() => new MailboxNotFound({ id }))

export const create = Effect.fn("Mailboxes.create")(function*(input: typeof NewMailbox.Type) {
  const principal = yield* requireCompany(input.companyId)
  const id = newId("mbx")
  const imap = yield* serverOf(id, "imap", input.imap)
  const smtp = yield* serverOf(id, "smtp", input.smtp)
  const now = yield* currentDate
  const created = yield* MailboxesRepo.use((repo) =>
    repo.create({
      id,
      companyId: principal.companyId,
      email: input.email,
      emailKey: input.email.toLowerCase(),
      displayName: input.displayName ?? null,
      imap: imap.server,
      imapPassword: imap.password,
      smtp: smtp.server,
      smtpPassword: smtp.password,
      dailyLimit: input.dailyLimit ?? null,
      status: "connecting",
      lastError: null,
      uidValidity: null,
      lastUid: 0,
      createdAt: now,
      updatedAt: now
    })
  )
  if (Option.isNone(created)) return yield* new InvalidMailbox({ message: `The company has a mailbox for ${input.email} already` })
  return toMailbox(created.value)
})

export const list = Effect.fn("Mailboxes.list")(function*(query: { readonly companyId?: string | undefined }, request: PageRequest) {
  const principal = yield* requireCompany(query.companyId)
  const page = yield* MailboxesRepo.use((repo) => repo.list(principal.companyId, windowOf(request)))
  return toPage(page.rows.map(toMailbox), page.total, request)
})

export const get = Effect.fn("Mailboxes.get")(function*(id: string, query: { readonly companyId?: string | undefined }) {
  const principal = yield* requireCompany(query.companyId)
  return toMailbox(yield* found(id)(yield* MailboxesRepo.use((repo) => repo.get(principal.companyId, id))))
})

export const update = Effect.fn("Mailboxes.update")(function*(id: string, patch: typeof MailboxPatch.Type) {
  const principal = yield* requireCompany(patch.companyId)
  const imap = patch.imap === undefined ? undefined : yield* serverOf(id, "imap", patch.imap)
  const smtp = patch.smtp === undefined ? undefined : yield* serverOf(id, "smtp", patch.smtp)
  const now = yield* currentDate
  const updated = yield* MailboxesRepo.use((repo) =>
    repo.update(principal.companyId, id, { displayName: patch.displayName, dailyLimit: patch.dailyLimit, imap, smtp }, now)
  )
  return toMailbox(yield* found(id)(updated))
})

export const remove = Effect.fn("Mailboxes.remove")(function*(id: string, query: { readonly companyId?: string | undefined }) {
  const principal = yield* requireCompany(query.companyId)
  return toMailbox(yield* found(id)(yield* MailboxesRepo.use((repo) => repo.remove(principal.companyId, id))))
})
