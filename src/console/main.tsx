// First, before any library reads the browser's language (locale.ts).
import "./locale.ts"
import { render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { type Caller, type Company, type Credentials, get, type Page, session } from "./api.ts"
import { Agents } from "./pages/Agents.tsx"
import { Campaigns } from "./pages/Campaigns.tsx"
import { Documents } from "./pages/Documents.tsx"
import { Inbox } from "./pages/Inbox.tsx"
import { Integrations } from "./pages/Integrations.tsx"
import { LandingPages } from "./pages/LandingPages.tsx"
import { Leads } from "./pages/Leads.tsx"
import { Profile } from "./pages/Profile.tsx"
import { Usage } from "./pages/Usage.tsx"
import { useAction } from "./ui.tsx"
import "./style.css"

const pages = {
  integrations: { title: "Integrations", Page: Integrations },
  usage: { title: "Usage", Page: Usage },
  campaigns: { title: "Campaigns", Page: Campaigns },
  "landing-pages": { title: "Landing pages", Page: LandingPages },
  leads: { title: "Leads", Page: Leads },
  inbox: { title: "Inbox", Page: Inbox },
  documents: { title: "Documents", Page: Documents },
  agents: { title: "Agents", Page: Agents },
  profile: { title: "Profile", Page: Profile }
} as const

type PageName = keyof typeof pages

const pageOfHash = (): PageName => {
  const name = location.hash.slice(1)
  return name in pages ? (name as PageName) : "integrations"
}

/** Sign-in: the personal access key and company id are checked with `GET /me` before they are kept. */
const SignIn = (props: { onSignedIn: (credentials: Credentials) => void }) => {
  const { run, Failure } = useAction()
  const submit = (event: SubmitEvent) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    const credentials = { key: String(form.get("key")).trim(), companyId: String(form.get("companyId")).trim() }
    run(() => get<Caller>(credentials, "/me").then(() => props.onSignedIn(credentials)))
  }
  return (
    <main class="sign-in">
      <h1>Sign in to the console</h1>
      <form onSubmit={submit}>
        <label>Personal access key<input name="key" type="password" autocomplete="off" required /></label>
        <label>Company id<input name="companyId" required /></label>
        <button type="submit">Sign in</button>
      </form>
      <Failure />
      <p>The key stays in this tab only: closing it signs you out.</p>
    </main>
  )
}

const Shell = (props: { credentials: Credentials; onSwitch: (companyId: string) => void; onSignOut: () => void }) => {
  const [page, setPage] = useState(pageOfHash)
  const [companies, setCompanies] = useState<ReadonlyArray<Company>>([])
  useEffect(() => {
    const follow = () => setPage(pageOfHash())
    addEventListener("hashchange", follow)
    return () => removeEventListener("hashchange", follow)
  }, [])
  useEffect(() => {
    get<Page<Company>>(props.credentials, "/companies?pageSize=100").then((answer) => setCompanies(answer.items), () => setCompanies([]))
  }, [props.credentials.key])
  const Current = pages[page].Page
  return (
    <>
      <header>
        <span class="brand">Platform console</span>
        <nav aria-label="Pages">
          {Object.entries(pages).map(([name, { title }]) => (
            <a href={`#${name}`} aria-current={name === page ? "page" : undefined}>{title}</a>
          ))}
        </nav>
        <label>
          Company
          <select value={props.credentials.companyId} onChange={(event) => props.onSwitch(event.currentTarget.value)}>
            {companies.length === 0 && <option value={props.credentials.companyId}>{props.credentials.companyId}</option>}
            {companies.map((company) => <option value={company.id}>{company.name}</option>)}
          </select>
        </label>
        <button type="button" onClick={props.onSignOut}>Sign out</button>
      </header>
      <main>
        <h1>{pages[page].title}</h1>
        <Current key={`${page}-${props.credentials.companyId}`} credentials={props.credentials} />
      </main>
    </>
  )
}

const App = () => {
  const [credentials, setCredentials] = useState(session.read)
  const keep = (next: Credentials) => {
    session.write(next)
    setCredentials(next)
  }
  if (credentials === undefined) return <SignIn onSignedIn={keep} />
  return (
    <Shell
      credentials={credentials}
      onSwitch={(companyId) => keep({ ...credentials, companyId })}
      onSignOut={() => {
        session.clear()
        setCredentials(undefined)
      }}
    />
  )
}

render(<App />, document.getElementById("app")!)
