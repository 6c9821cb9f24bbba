import { expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { passwordContext } from "../../../src/outreach/inbox/Mailboxes.ts"
import { SecretBox } from "../../../src/platform/Secrets.ts"
import { expectErrorResponse, requestWithKey, send } from "../../support/Http.ts"
import { backends, client, seedTenant, testServer } from "../../support/TestServer.ts"

const server = { host: "mail.example.com", port: 993, secure: true, user: "sales@example.com", password: "imap-secret-123" }
const newMailbox = {
  email: "Sales@Example.com",
  displayName: "Sales",
  imap: server,
  smtp: { ...server, port: 465, password: "smtp-secret-456" },
  dailyLimit: 40
}

for (const backend of backends) {
  it.layer(testServer(backend.storage, { outbound: { allowedHosts: ["10.1.2.3"] } }), { timeout: 60_000 })(`mailboxes on ${backend.name}`, (it) => {
    it.effect("create answers 201 without passwords; they are sealed at rest; get, list, patch, delete", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const api = yield* client({ apiKey: tenant.apiKey })
        const created = yield* api.inbox.createMailbox({ payload: newMailbox })
        expect(created).toMatchObject({
          email: "Sales@Example.com",
          displayName: "Sales",
          companyId: tenant.companyId,
          imap: { host: "mail.example.com", port: 993, secure: true, user: "sales@example.com" },
          smtp: { port: 465 },
          dailyLimit: 40,
          status: "connecting",
          lastError: null
        })
        expect(JSON.stringify(created)).not.toMatch(/secret/)
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ readonly imap_password: string; readonly smtp_password: string }>`SELECT imap_password, smtp_password FROM mailboxes WHERE id = ${created.id}`
        expect(JSON.stringify(row)).not.toMatch(/secret/)
        const box = yield* SecretBox
        expect(yield* box.open(row!.imap_password, passwordContext(created.id, "imap"))).toBe("imap-secret-123")
        // Bound to its mailbox and server: the SMTP column does not open as the IMAP password.
        const crossed = yield* Effect.exit(box.open(row!.smtp_password, passwordContext(created.id, "imap")))
        expect(crossed._tag).toBe("Failure")

        expect(yield* api.inbox.getMailbox({ params: { mailboxId: created.id }, query: {} })).toEqual(created)
        expect((yield* api.inbox.listMailboxes({ query: {} })).items.map((box) => box.id)).toEqual([created.id])
        const duplicate = yield* send(requestWithKey("POST", "/api/v0/inbox/mailboxes", tenant.apiKey, { ...newMailbox, email: "sales@example.com" }))
        expectErrorResponse(duplicate, 400, /already/)

        const changed = yield* api.inbox.updateMailbox({ params: { mailboxId: created.id }, payload: { displayName: null, dailyLimit: 10 } })
        expect(changed).toMatchObject({ displayName: null, dailyLimit: 10, imap: created.imap })
        const other = yield* client({ apiKey: (yield* seedTenant("other")).apiKey })
        expect((yield* Effect.flip(other.inbox.getMailbox({ params: { mailboxId: created.id }, query: {} })))._tag).toBe("NotFound")
        expect((yield* Effect.flip(other.inbox.deleteMailbox({ params: { mailboxId: created.id }, query: {} })))._tag).toBe("NotFound")
        yield* api.inbox.deleteMailbox({ params: { mailboxId: created.id }, query: {} })
        expect((yield* api.inbox.listMailboxes({ query: {} })).total).toBe(0)
      }).pipe(Effect.provide(SecretBox.layer)))

    it.effect("an internal literal host not allowed is a 400 naming it; an allowed one and names pass; bad fields 400", () =>
      Effect.gen(function*() {
        const tenant = yield* seedTenant()
        const post = (body: unknown) => send(requestWithKey("POST", "/api/v0/inbox/mailboxes", tenant.apiKey, body))
        for (const host of ["127.0.0.1", "169.254.169.254", "[::1]", "192.168.0.10", "::ffff:10.0.0.1"]) {
          expectErrorResponse(yield* post({ ...newMailbox, imap: { ...server, host } }), 400, /imap\.host is refused: .*internal address/)
        }
        expectErrorResponse(yield* post({ ...newMailbox, smtp: { ...server, host: "10.0.0.8" } }), 400, /smtp\.host is refused/)
        expect((yield* post({ ...newMailbox, imap: { ...server, host: "10.1.2.3" } })).status).toBe(201)
        expectErrorResponse(yield* post({ ...newMailbox, email: "x@y.z", imap: { ...server, port: 70_000 } }), 400, /port/)
        expectErrorResponse(yield* post({ ...newMailbox, email: "x@y.z", imap: { ...server, host: "evil.example\r\nX: y" } }), 400, /host/)
        expectErrorResponse(yield* post({ ...newMailbox, email: "x@y.z", imap: { ...server, pasword: "typo" } }), 400, /pasword/)
        expectErrorResponse(yield* post({ ...newMailbox, email: "not an address" }), 400, /email/)
      }))
  })
}
