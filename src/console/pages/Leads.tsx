import { useState } from "preact/hooks"
import { type Credentials, get, type LeadRecord, type Page, type SmartListRecord } from "../api.ts"
import { date, Loaded, Section, useLoad } from "../ui.tsx"

/** The company's leads, searched by e-mail, name or company, and its smart lists. */
export const Leads = (props: { credentials: Credentials }) => {
  const [search, setSearch] = useState("")
  const leads = useLoad(
    () => get<Page<LeadRecord>>(props.credentials, `/leads?pageSize=50${search === "" ? "" : `&search=${encodeURIComponent(search)}`}`),
    [props.credentials, search]
  )
  const smartLists = useLoad(() => get<Page<SmartListRecord>>(props.credentials, "/smart-lists?pageSize=100"), [props.credentials])
  const submit = (event: SubmitEvent) => {
    event.preventDefault()
    setSearch(String(new FormData(event.currentTarget as HTMLFormElement).get("search")).trim())
  }
  return (
    <>
      <Section title="Leads">
        <form class="inline" role="search" onSubmit={submit}>
          <label>Search leads<input name="search" type="search" maxLength={320} /></label>
          <button type="submit">Search</button>
        </form>
        <Loaded state={leads}>
          {(page) => page.items.length === 0 ? <p>No leads found.</p> : (
            <table>
              <thead><tr><th>E-mail</th><th>Name</th><th>Company</th><th>Status</th><th>Tags</th></tr></thead>
              <tbody>
                {page.items.map((lead) => (
                  <tr>
                    <td>{lead.email}</td><td>{[lead.firstName, lead.lastName].filter(Boolean).join(" ")}</td>
                    <td>{lead.company ?? ""}</td><td>{lead.status}</td><td>{lead.tags.join(", ")}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </Loaded>
      </Section>
      <Section title="Smart lists">
        <Loaded state={smartLists}>
          {(page) => page.items.length === 0 ? <p>No smart lists yet.</p> : (
            <ul>{page.items.map((list) => <li>{list.name} <small>(updated {date(list.updated_date)})</small></li>)}</ul>
          )}
        </Loaded>
      </Section>
    </>
  )
}
