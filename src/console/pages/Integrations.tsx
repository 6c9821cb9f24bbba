import { useState } from "preact/hooks"
import { call, type Credentials, get, type Keys } from "../api.ts"
import { date, Loaded, RowAction, Section, useAction, useLoad } from "../ui.tsx"
import { Webhooks } from "./Webhooks.tsx"

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
                    <RowAction kind="danger" name={`Delete key ${key.name}`} onClick={() => remove(key.name)}>Delete</RowAction>
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

export const Integrations = (props: { credentials: Credentials }) => (
  <>
    <CompanyKeys credentials={props.credentials} />
    <Webhooks credentials={props.credentials} />
  </>
)
