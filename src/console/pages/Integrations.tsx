import { useState } from "preact/hooks"
import { call, type Credentials, type DeliveryRecord, get, type Keys, type Page, type WebhookRecord } from "../api.ts"
import { date, Loaded, Section, useAction, useLoad } from "../ui.tsx"

/** Company API keys: created with the plaintext shown once, deleted by name. */
const CompanyKeys = (props: { credentials: Credentials }) => {
  const { credentials } = props
  const keys = useLoad(() => get<Keys>(credentials, "/keys"), [credentials])
  const [created, setCreated] = useState<{ name: string; apiKey: string }>()
  const { run, Failure } = useAction()
  const create = (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const name = String(new FormData(form).get("name")).trim()
    run(() =>
      call<{ apiKey: string }>(credentials, "POST", "/api_keys", { companyId: credentials.companyId, name }).then((answer) => {
        setCreated({ name, apiKey: answer.apiKey })
        form.reset()
        keys.reload()
      })
    )
  }
  const remove = (name: string) =>
    run(() => call(credentials, "DELETE", "/api_keys", { companyId: credentials.companyId, name }).then(() => {
      setCreated(undefined)
      keys.reload()
    }))
  return (
    <Section title="Company API keys">
      <form class="inline" onSubmit={create}>
        <label>Key name<input name="name" required maxLength={100} /></label>
        <button type="submit">Create key</button>
      </form>
      <Failure />
      {created !== undefined && (
        <div role="status">
          <p>Key “{created.name}” created. Copy it now: it is not shown again.</p>
          <p class="secret" data-testid="new-key">{created.apiKey}</p>
        </div>
      )}
      <Loaded state={keys}>
        {(list) => {
          const mine = list.companyKeys.filter((key) => key.companyId === credentials.companyId)
          return mine.length === 0 ? <p>No company keys yet.</p> : (
            <table>
              <thead><tr><th>Name</th><th>Key</th><th>Created</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                {mine.map((key) => (
                  <tr>
                    <td>{key.name}</td><td><code>{key.maskedKey}</code></td><td>{date(key.createdDate)}</td>
                    <td><button type="button" class="danger" onClick={() => remove(key.name)} aria-label={`Delete key ${key.name}`}>Delete</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }}
      </Loaded>
    </Section>
  )
}

const Deliveries = (props: { credentials: Credentials; webhook: WebhookRecord }) => {
  const deliveries = useLoad(
    () => get<Page<DeliveryRecord>>(props.credentials, `/webhooks/${props.webhook.id}/deliveries?pageSize=20`),
    [props.credentials, props.webhook.id]
  )
  return (
    <Loaded state={deliveries}>
      {(page) => page.items.length === 0 ? <p>No deliveries yet.</p> : (
        <table aria-label={`Deliveries of ${props.webhook.url}`}>
          <thead><tr><th>Event</th><th>Status</th><th>Attempts</th><th>HTTP</th><th>Latency</th><th>Response</th></tr></thead>
          <tbody>
            {page.items.map((delivery) => (
              <tr>
                <td>{delivery.event}</td><td>{delivery.status}</td><td>{delivery.attempts}</td>
                <td>{delivery.responseStatus ?? "—"}</td><td>{delivery.latencyMs === null ? "—" : `${delivery.latencyMs} ms`}</td>
                <td>{delivery.responseExcerpt ?? delivery.error ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Loaded>
  )
}

/** Webhooks with their delivery log; a test delivery on demand. */
const Webhooks = (props: { credentials: Credentials }) => {
  const webhooks = useLoad(() => get<Page<WebhookRecord>>(props.credentials, "/webhooks?pageSize=50"), [props.credentials])
  const [open, setOpen] = useState<string>()
  const { run, Failure } = useAction()
  return (
    <Section title="Webhooks">
      <Failure />
      <Loaded state={webhooks}>
        {(page) => page.items.length === 0 ? <p>No webhooks yet (create them with POST /api/v0/webhooks).</p> : (
          <ul>
            {page.items.map((webhook) => (
              <li>
                <code>{webhook.url}</code> — {webhook.enabled ? "enabled" : "disabled"}, {webhook.events.join(", ")}{" "}
                <button type="button" class="secondary" onClick={() => setOpen(open === webhook.id ? undefined : webhook.id)}>
                  {open === webhook.id ? "Hide deliveries" : "Show deliveries"}
                </button>{" "}
                <button type="button" class="secondary" onClick={() => run(() => call(props.credentials, "POST", `/webhooks/${webhook.id}/test`))}>
                  Send a test
                </button>
                {open === webhook.id && <Deliveries credentials={props.credentials} webhook={webhook} />}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
    </Section>
  )
}

export const Integrations = (props: { credentials: Credentials }) => (
  <>
    <CompanyKeys credentials={props.credentials} />
    <Webhooks credentials={props.credentials} />
  </>
)
