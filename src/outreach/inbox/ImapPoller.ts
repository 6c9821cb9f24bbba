import { Context, Data, Deferred, Duration, Effect, Layer, Ref } from "effect"
import { ImapFlow } from "imapflow"
import { currentDate } from "../../platform/Time.ts"
import { LeaseLost, pollForever, whileLeased } from "../../platform/LeasedWork.ts"
import { makeAddressPolicy, OutboundConfig } from "../../platform/OutboundPolicy.ts"
import { SecretBox } from "../../platform/Secrets.ts"
import { InboxConfig } from "./InboxConfig.ts"
import { InboundQueue } from "./InboundQueue.ts"
import type { Destination } from "./InboundQueueRepo.ts"
import { type MailboxClaim, MailboxesRepo } from "./MailboxesRepo.ts"
import { passwordContext } from "./Mailboxes.ts"

/**
 * The IMAP poller: one session per mailbox, held under a lease (so one
 * process at a time reads a mailbox, whatever the number of processes on one
 * PostgreSQL). A session connects (`imapflow`; the host resolved and checked
 * by the outbound policy, the connection made to the checked address), takes
 * in every message of INBOX above the last UID it remembers, then waits for
 * the server's IDLE notice of new mail, or `INBOX_POLL_MS` where the server
 * offers no IDLE, and looks again. Each message is handed to the inbound
 * queue, whose worker processes it as it does what inbound SMTP accepted:
 * stored raw in one transaction with its UID recorded while the lease is
 * still held, so no UID is recorded before its message is durable, and a
 * crash before that commit leaves neither (the message is fetched again). A
 * message fetched again all the same (a new UIDVALIDITY: the folder was
 * rebuilt and is read from its start) is kept once by the worker (by
 * Message-ID per company). The session's state shows on the mailbox
 * (`connecting`, `ok`, `error` with `lastError`); a failed session retries
 * after `INBOX_POLL_MS`. Changing the mailbox's servers or deleting it ends
 * the lease, and so the session.
 */

/** Why a session with the IMAP server failed, as `lastError` shows it (never the password). */
class ImapFailure extends Data.TaggedError("ImapFailure")<{ readonly message: string }> {}

/** Most mailbox sessions one process holds at once. */
const maxSessions = 100

/** Mail read from a mailbox is for its company alone, through that mailbox. */
const destinationsOf = (claim: MailboxClaim): ReadonlyArray<Destination> =>
  [{ companies: [{ companyId: claim.mailbox.companyId, mailboxId: claim.mailbox.id }] }]

export class ImapPoller extends Context.Service<ImapPoller, {
  /** Claims free mailboxes and reads each once (new mail since the last UID), then lets them go; answers how many it read. For tests and tools. */
  readonly syncOnce: Effect.Effect<number>
  /** Claims free mailboxes and starts a session on each in the background (the worker's round); answers how many it claimed. */
  readonly claimSessions: Effect.Effect<number>
}>()("inbox/ImapPoller") {
  static readonly layer = Layer.effect(ImapPoller, Effect.gen(function*() {
    const config = yield* InboxConfig
    const repo = yield* MailboxesRepo
    const queue = yield* InboundQueue
    const box = yield* SecretBox
    const policy = makeAddressPolicy(yield* OutboundConfig)
    const sessions = yield* Ref.make(0)
    const scope = yield* Effect.scope

    const leaseUntil = (now: Date) => new Date(now.getTime() + config.leaseMs)
    const setStatus = (claim: MailboxClaim, status: "connecting" | "ok" | "error", error: string | null) =>
      Effect.flatMap(currentDate, (now) => repo.setStatus(claim, status, error, now))

    /** A sealed password; one that does not open (the key changed) is the session's failure, not a defect. */
    const openPassword = (sealed: string, context: string) =>
      box.open(sealed, context).pipe(
        Effect.mapError((unreadable) => new ImapFailure({ message: `The password: ${unreadable.message}` }))
      )

    /** A connected client for the scope; fails with a message fit for `lastError` (never the password). */
    const connect = (claim: MailboxClaim) =>
      Effect.acquireRelease(
        Effect.flatMap(openPassword(claim.mailbox.imapPassword, passwordContext(claim.mailbox.id, "imap")), (password) => Effect.tryPromise({
          try: async () => {
            const { imap } = claim.mailbox
            const host = imap.host.replace(/^\[|\]$/g, "")
            const [address] = await policy.resolve(host)
            const client = new ImapFlow({
              host: address!.address,
              servername: host,
              port: imap.port,
              secure: imap.secure,
              auth: { user: imap.user, pass: password },
              logger: false,
              // IDLE as soon as the session is quiet (imapflow waits 15 s by default), so new mail shows at once.
              autoIdleDelay: 1_000,
              connectionTimeout: 15_000,
              greetingTimeout: 15_000,
              socketTimeout: 5 * 60_000
            })
            client.on("error", () => undefined)
            await client.connect()
            return client
          },
          catch: (error) => new ImapFailure({ message: reasonOf(error) })
        })),
        (client) => Effect.promise(() => client.logout().catch(() => client.close()))
      )

    /** Records `uid` as the mailbox's last; fails with `LeaseLost` when another poller owns the mailbox now. */
    const recordUid = (claim: MailboxClaim, validity: number, uid: number) =>
      Effect.flatMap(repo.advance(claim, validity, uid), (held) => (held ? Effect.void : Effect.fail(new LeaseLost({ id: claim.mailbox.id }))))

    /** A listed message's raw source; undefined (logged) when it is too large to take in or gone from the server. */
    const fetchSource = (claim: MailboxClaim, client: ImapFlow, message: { readonly uid: number; readonly size?: number | undefined }) =>
      Effect.gen(function*() {
        const skipTooLarge = (size: number) =>
          Effect.as(Effect.logWarning("Inbound message skipped: too large", { mailboxId: claim.mailbox.id, uid: message.uid, size }), undefined)
        const listedSize = message.size ?? 0
        if (listedSize > config.inboundMaxBytes) return yield* skipTooLarge(listedSize)
        const fetched = yield* Effect.tryPromise({
          try: () => client.fetchOne(String(message.uid), { source: true }, { uid: true }),
          catch: (error) => new ImapFailure({ message: reasonOf(error) })
        })
        if (fetched === false || fetched.source === undefined) return undefined
        return fetched.source.length > config.inboundMaxBytes ? yield* skipTooLarge(fetched.source.length) : fetched.source
      })

    /**
     * Hands every message above the remembered UID to the inbound queue, each stored in one transaction with the UID
     * recorded; answers false when the lease was lost (and with it that transaction).
     */
    const catchUp = (claim: MailboxClaim, client: ImapFlow, remembered: Ref.Ref<{ readonly validity: number | null; readonly uid: number }>) =>
      Effect.gen(function*() {
        const lock = yield* Effect.promise(() => client.getMailboxLock("INBOX"))
        return yield* Effect.gen(function*() {
          const box = client.mailbox
          if (box === false) return yield* new ImapFailure({ message: "INBOX could not be opened" })
          const validity = Number(box.uidValidity)
          const last = yield* Ref.get(remembered)
          const after = last.validity === validity ? last.uid : 0
          if (box.exists === 0) return yield* repo.advance(claim, validity, after)
          const listed = yield* Effect.tryPromise({
            try: () => client.fetchAll(`${after + 1}:*`, { uid: true, size: true }, { uid: true }),
            catch: (error) => new ImapFailure({ message: reasonOf(error) })
          })
          for (const message of listed.filter((entry) => entry.uid > after).sort((a, b) => a.uid - b.uid)) {
            const source = yield* fetchSource(claim, client, message)
            const checkpoint = recordUid(claim, validity, message.uid)
            const taken = yield* (source === undefined ? checkpoint : queue.acceptWith(source, destinationsOf(claim), checkpoint)).pipe(
              Effect.as(true),
              Effect.catchTag("LeaseLost", () => Effect.succeed(false))
            )
            if (!taken) return false
            yield* Ref.set(remembered, { validity, uid: message.uid })
          }
          yield* Ref.set(remembered, { validity, uid: Math.max(after, ...listed.map((entry) => entry.uid)) })
          return true
        }).pipe(Effect.ensuring(Effect.sync(() => lock.release())))
      })

    const rememberedOf = (claim: MailboxClaim) => Ref.make({ validity: claim.mailbox.uidValidity, uid: claim.mailbox.lastUid })

    /** Connect and catch up once; the outcome shows on the mailbox. */
    const readOnce = (claim: MailboxClaim) =>
      Effect.scoped(Effect.gen(function*() {
        yield* setStatus(claim, "connecting", null)
        const client = yield* connect(claim)
        yield* catchUp(claim, client, yield* rememberedOf(claim))
        yield* setStatus(claim, "ok", null)
      })).pipe(Effect.catchTag("ImapFailure", (error) => Effect.asVoid(setStatus(claim, "error", error.message))))

    /** Connected: catch up, then wait for IDLE's notice of new mail (or the poll interval) and again, until the lease is lost. */
    const session = (claim: MailboxClaim) =>
      Effect.gen(function*() {
        const remembered = yield* rememberedOf(claim)
        while (true) {
          const failure = yield* Effect.scoped(Effect.gen(function*() {
            yield* setStatus(claim, "connecting", null)
            const client = yield* connect(claim)
            let wake = yield* Deferred.make<void>()
            client.on("exists", () => Deferred.doneUnsafe(wake, Effect.void))
            while (true) {
              if (!(yield* catchUp(claim, client, remembered))) return yield* new LeaseLost({ id: claim.mailbox.id })
              yield* setStatus(claim, "ok", null)
              yield* Effect.raceFirst(Deferred.await(wake), Effect.sleep(Duration.millis(config.pollMs)))
              wake = yield* Deferred.make<void>()
            }
          })).pipe(Effect.catchTag("ImapFailure", (error) => Effect.succeed(error.message)))
          yield* setStatus(claim, "error", failure)
          yield* Effect.sleep(Duration.millis(config.pollMs))
        }
      }).pipe(
        whileLeased(claim.mailbox.id, config.leaseMs, Effect.flatMap(currentDate, (now) => repo.renew(claim, leaseUntil(now)))),
        Effect.catchTag("LeaseLost", () => Effect.logInfo("Mailbox session ended: its lease was lost", { mailboxId: claim.mailbox.id })),
        Effect.ensuring(Effect.andThen(repo.release(claim), Ref.update(sessions, (count) => count - 1)))
      )

    const claim = (limit: number) => Effect.flatMap(currentDate, (now) => repo.claim(now, leaseUntil(now), limit))

    return {
      syncOnce: Effect.gen(function*() {
        const claims = yield* claim(maxSessions)
        yield* Effect.forEach(claims, (held) => Effect.ensuring(readOnce(held), repo.release(held)), { concurrency: 4, discard: true })
        return claims.length
      }),
      claimSessions: Effect.gen(function*() {
        const free = maxSessions - (yield* Ref.get(sessions))
        if (free <= 0) return 0
        const claims = yield* claim(free)
        yield* Ref.update(sessions, (count) => count + claims.length)
        yield* Effect.forEach(claims, (held) => Effect.forkIn(session(held), scope), { discard: true })
        return claims.length
      })
    }
  }))

  /** The poller of a server process, when `INBOX_WORKER` is on. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const config = yield* InboxConfig
    if (!config.pollerEnabled) return
    const poller = yield* ImapPoller
    yield* pollForever({ name: "IMAP poller", poll: poller.claimSessions, batch: maxSessions, pollMs: config.pollMs })
  }))
}

/** What a connection failure says, for `lastError`: imapflow's server answer or the socket's reason. */
const reasonOf = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return String(error)
  const failure = error as { readonly message?: string; readonly responseText?: string; readonly authenticationFailed?: boolean; readonly code?: string }
  if (failure.authenticationFailed === true) return `Authentication failed${failure.responseText === undefined ? "" : `: ${failure.responseText}`}`
  return [failure.message, failure.responseText, failure.code].filter((part) => part !== undefined && part !== "").join(": ") || "Connection failed"
}
