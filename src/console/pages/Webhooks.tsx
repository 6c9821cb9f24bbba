import { useState } from "preact/hooks"
import { call, type Credentials, type DeliveryRecord, get, type NewWebhook, type Page, type WebhookEvent, type WebhookRecord } from "../api.ts"
import { date, Loaded, RowAction, Section, useAction, useLoad } from "../ui.tsx"

/** Every event a webhook may subscribe to, with what it means (the API's `EventType`: a new one fails the type check). */
const eventMeanings: Record<WebhookEvent, string> = {
  "campaign.sent": "a campaign finished sending",
  "recipient.opened": "a recipient opened a campaign",
  "recipient.clicked": "a recipient clicked a link",
  "recipient.bounced": "a recipient's mail bounced",
  "inbox.reply_received": "a reply arrived in the inbox",
  "lead.created": "a lead was created",
  "lead.status_changed": "a lead's status changed",
  "landing_page.submitted": "a landing page form was sent",
  "task.run_completed": "a scheduled task's run ended",
  "document.ready": "a document is searchable",
  "render.completed": "a canvas render is ready"
}

const Deliveries = (props: { credentials: Credentials; webhook: WebhookRecord }) => {
  const { credentials, webhook } = props
  const deliveries = useLoad(() => get<Page<DeliveryRecord>>(credentials, `/webhooks/${webhook.id}/deliveries?pageSize=20`), [credentials, webhook.id])
  const { run, Failure } = useAction()
  const retry = (delivery: DeliveryRecord) =>
    run(() => call(credentials, "POST", `/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`).then(deliveries.reload))
  return (
    <>
      <p>
        <button type="button" class="secondary" onClick={deliveries.reload}>Refresh deliveries</button>
      </p>
      <Failure />
      <Loaded state={deliveries}>
        {(page) => page.items.length === 0 ? <p>No deliveries yet.</p> : (
          <table aria-label={`Deliveries of ${webhook.url}`}>
            <thead>
              <tr><th>Event</th><th>Status</th><th>Attempts</th><th>HTTP</th><th>Latency</th><th>Response</th><th>Created</th><th><span class="visually-hidden">Actions</span></th></tr>
            </thead>
            <tbody>
              {page.items.map((delivery) => (
                <tr>
                  <td>{delivery.event}</td><td data-testid="delivery-status">{delivery.status}</td><td>{delivery.attempts}</td>
                  <td data-testid="delivery-code">{delivery.responseStatus ?? "—"}</td>
                  <td>{delivery.latencyMs === null ? "—" : `${delivery.latencyMs} ms`}</td>
                  <td class="excerpt">{delivery.responseExcerpt ?? delivery.error ?? ""}</td>
                  <td>{date(delivery.created)}</td>
                  <RowAction kind="secondary" name={`Retry the ${delivery.event} delivery`} onClick={() => retry(delivery)}>Retry</RowAction>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </>
  )
}

/** Creates a webhook; its signing secret is shown once, in the answer, and never kept. */
const NewWebhookForm = (props: { credentials: Credentials; onCreated: () => void }) => {
  const [created, setCreated] = useState<NewWebhook>()
  const { run, Failure } = useAction()
  const create = (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const fields = new FormData(form)
    const description = String(fields.get("description")).trim()
    const body = {
      url: String(fields.get("url")).trim(),
      events: fields.getAll("events").map(String),
      ...(description === "" ? {} : { description })
    }
    run(() => call<NewWebhook>(props.credentials, "POST", "/webhooks", body).then((answer) => {
      setCreated(answer)
      form.reset()
      props.onCreated()
    }))
  }
  return (
    <>
      <form onSubmit={create}>
        <label>Endpoint URL<input name="url" type="url" required maxLength={2048} placeholder="https://crm.example.com/hooks" /></label>
        <label>Description (optional)<input name="description" maxLength={500} /></label>
        <fieldset>
          <legend>Events</legend>
          {Object.entries(eventMeanings).map(([name, meaning]) => (
            <label class="check"><input type="checkbox" name="events" value={name} /> <code>{name}</code> — {meaning}</label>
          ))}
        </fieldset>
        <button type="submit">Create webhook</button>
      </form>
      <Failure />
      {created !== undefined && (
        <div role="status">
          <p>Webhook for <code>{created.url}</code> created. Copy its signing secret now: it is not shown again.</p>
          <p class="secret" data-testid="webhook-secret">{created.secret}</p>
        </div>
      )}
    </>
  )
}

/** Webhooks: created (secret shown once), deleted, tested; each with its delivery log and retries. */
export const Webhooks = (props: { credentials: Credentials }) => {
  const { credentials } = props
  const webhooks = useLoad(() => get<Page<WebhookRecord>>(credentials, "/webhooks?pageSize=50"), [credentials])
  // The webhook whose log is open; a new `shown` reads the log again (after a test delivery).
  const [open, setOpen] = useState<{ id: string; shown: number }>()
  const show = (id: string | undefined) => setOpen(id === undefined ? undefined : { id, shown: (open?.shown ?? 0) + 1 })
  const { run, Failure } = useAction()
  const test = (webhook: WebhookRecord) => run(() => call(credentials, "POST", `/webhooks/${webhook.id}/test`).then(() => show(webhook.id)))
  const remove = (webhook: WebhookRecord) => run(() => call(credentials, "DELETE", `/webhooks/${webhook.id}`).then(webhooks.reload))
  return (
    <Section title="Webhooks">
      <NewWebhookForm credentials={credentials} onCreated={webhooks.reload} />
      <Failure />
      <Loaded state={webhooks}>
        {(page) => page.items.length === 0 ? <p>No webhooks yet.</p> : (
          <ul class="webhooks">
            {page.items.map((webhook) => (
              <li>
                <code>{webhook.url}</code> — {webhook.enabled ? "enabled" : `disabled${webhook.disabledReason === null ? "" : `: ${webhook.disabledReason}`}`},{" "}
                {webhook.events.join(", ")}
                <div class="actions">
                  <button type="button" class="secondary" aria-expanded={open?.id === webhook.id}
                    onClick={() => show(open?.id === webhook.id ? undefined : webhook.id)}>
                    {open?.id === webhook.id ? "Hide deliveries" : "Show deliveries"}
                  </button>
                  <button type="button" class="secondary" onClick={() => test(webhook)}>Send a test</button>
                  <button type="button" class="danger" aria-label={`Delete webhook ${webhook.url}`} onClick={() => remove(webhook)}>Delete</button>
                </div>
                {open?.id === webhook.id && <Deliveries key={`${webhook.id}-${open.shown}`} credentials={credentials} webhook={webhook} />}
              </li>
            ))}
          </ul>
        )}
      </Loaded>
    </Section>
  )
}
