import { useState } from "preact/hooks"
import { call, type Credentials, get, type Keys, type NewKey } from "../api.ts"
import { date, Loaded, RowAction, Section, useAction, useLoad } from "../ui.tsx"

/** The signed-in person's personal access keys: issued with an optional expiry (shown once), revoked. */
export const Profile = (props: { credentials: Credentials }) => {
  const { credentials } = props
  const keys = useLoad(() => get<Keys>(credentials, "/keys"), [credentials])
  const [created, setCreated] = useState<NewKey>()
  const { run, Failure } = useAction()
  const create = (event: SubmitEvent) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const fields = new FormData(form)
    const expires = String(fields.get("expiresAt"))
    const body = { name: String(fields.get("name")).trim(), ...(expires === "" ? {} : { expiresAt: new Date(expires).toISOString() }) }
    run(() => call<NewKey>(credentials, "POST", "/keys", body).then((answer) => {
      setCreated(answer)
      form.reset()
      keys.reload()
    }))
  }
  return (
    <Section title="Personal access keys">
      <form class="inline" onSubmit={create}>
        <label>Key name<input name="name" required maxLength={100} /></label>
        <label>Expires on (optional)<input name="expiresAt" type="date" /></label>
        <button type="submit">Create personal key</button>
      </form>
      <Failure />
      {created !== undefined && (
        <div role="status">
          <p>Personal key “{created.name}” created. Copy it now: it is not shown again.</p>
          <p class="secret">{created.key}</p>
        </div>
      )}
      <Loaded state={keys}>
        {(list) => (
          <table>
            <thead><tr><th>Name</th><th>Key</th><th>Created</th><th>Expires</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {list.personalAccessKeys.map((key) => (
                <tr>
                  <td>{key.name}</td><td><code>{key.maskedKey}</code></td><td>{date(key.createdDate)}</td><td>{date(key.expiresAt)}</td>
                  <RowAction kind="danger" name={`Revoke key ${key.name}`} onClick={() => run(() => call(credentials, "DELETE", `/keys/${key.id}`).then(keys.reload))}>
                    Revoke
                  </RowAction>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
    </Section>
  )
}
