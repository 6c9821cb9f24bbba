import { Config, Context, Effect, Layer, Option } from "effect"
import { positiveInt, switchedOn } from "../../platform/AppConfig.ts"

/** The inbox's settings (docs/inbox.md, README). */
export interface InboxSettings {
  /** `INBOUND_SMTP_PORT`: the port inbound SMTP listens on; none: no inbound SMTP. */
  readonly inboundSmtpPort: Option.Option<number>
  /** `INBOUND_SMTP_HOST`: the address inbound SMTP listens on. */
  readonly inboundSmtpHost: string
  /** `INBOUND_MAX_BYTES`: the largest inbound message (SMTP answers 552 beyond; the poller skips it). */
  readonly inboundMaxBytes: number
  /** `INBOX_WORKER` (`on`/`off`): whether this process polls the mailboxes' IMAP servers. */
  readonly pollerEnabled: boolean
  /** `INBOX_LEASE_MS`: how long a poller's claim on a mailbox holds without renewal. */
  readonly leaseMs: number
  /** `INBOX_POLL_MS`: the pause between looks at a mailbox whose server offers no IDLE, and between claims. */
  readonly pollMs: number
}

export const inboxDefaults: InboxSettings = {
  inboundSmtpPort: Option.none(),
  inboundSmtpHost: "0.0.0.0",
  inboundMaxBytes: 25 * 1024 * 1024,
  pollerEnabled: true,
  leaseMs: 120_000,
  pollMs: 30_000
}

export class InboxConfig extends Context.Service<InboxConfig, InboxSettings>()("inbox/InboxConfig") {
  static readonly fromEnv = Config.all({
    inboundSmtpPort: Config.option(Config.Port("INBOUND_SMTP_PORT")),
    inboundSmtpHost: Config.String("INBOUND_SMTP_HOST").pipe(Config.withDefault(inboxDefaults.inboundSmtpHost)),
    inboundMaxBytes: positiveInt("INBOUND_MAX_BYTES", inboxDefaults.inboundMaxBytes),
    pollerEnabled: switchedOn("INBOX_WORKER"),
    leaseMs: positiveInt("INBOX_LEASE_MS", inboxDefaults.leaseMs),
    pollMs: positiveInt("INBOX_POLL_MS", inboxDefaults.pollMs)
  })

  static readonly layer = Layer.effect(InboxConfig, Effect.orDie(InboxConfig.fromEnv))

  static readonly layerWith = (overrides: Partial<InboxSettings> = {}) =>
    Layer.succeed(InboxConfig, { ...inboxDefaults, ...overrides })
}
