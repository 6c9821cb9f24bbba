import { useState } from "preact/hooks"
import { call, type Credentials, get, type LandingPageRecord, type LandingPageStats, type Page } from "../api.ts"
import { TimeChart } from "../Chart.tsx"
import { date, Loaded, percent, SandboxedHtml, Section, useAction, useLoad } from "../ui.tsx"

const days = 30

/** A page's last 30 days (views, visitors, submissions per day) and its body, with publishing at hand. */
const PageDetail = (props: { credentials: Credentials; page: LandingPageRecord; onChanged: (page: LandingPageRecord) => void }) => {
  const { page } = props
  const stats = useLoad(() => get<LandingPageStats>(props.credentials, `/landing-pages/${page.id}/stats?days=${days}`), [page.id])
  const { run, Failure } = useAction()
  const toggle = () =>
    run(() =>
      call<LandingPageRecord>(props.credentials, "POST", `/landing-pages/${page.id}/${page.status === "published" ? "unpublish" : "publish"}`, {})
        .then(props.onChanged)
    )
  return (
    <Section title={`Landing page “${page.name}”`}>
      <p>
        Status: <strong data-testid="page-status">{page.status}</strong> · version {page.bodyVersion} · updated {date(page.updated_date)}
        {page.url !== null && <> · <a href={page.url} target="_blank" rel="noopener noreferrer">{page.url}</a></>}
      </p>
      <button type="button" onClick={toggle}>{page.status === "published" ? "Unpublish" : "Publish"}</button>
      <Failure />
      <Loaded state={stats}>
        {(found) => (
          <>
            <div class="metrics" aria-label={`Last ${days} days`}>
              <div><strong data-testid="page-views">{found.views}</strong>views</div>
              <div><strong>{found.uniqueVisitors}</strong>unique visitors</div>
              <div><strong data-testid="page-submissions">{found.submissions}</strong>submissions</div>
              <div><strong>{percent(found.conversionRate)}</strong>conversion</div>
            </div>
            <TimeChart
              unit="visits"
              title="Per day"
              x={found.perDay.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000)}
              series={[
                { label: "views", values: found.perDay.map((day) => day.views) },
                { label: "unique visitors", values: found.perDay.map((day) => day.uniqueVisitors) },
                { label: "submissions", values: found.perDay.map((day) => day.submissions) }
              ]}
            />
          </>
        )}
      </Loaded>
      <h3>Body preview</h3>
      <SandboxedHtml title={`Body of ${page.name}`} html={page.bodyDocument.html} />
    </Section>
  )
}

/** The company's landing pages; one's traffic, body and publishing. */
export const LandingPages = (props: { credentials: Credentials }) => {
  const [revision, setRevision] = useState(0)
  const list = useLoad(() => get<Page<LandingPageRecord>>(props.credentials, "/landing-pages?pageSize=100"), [props.credentials, revision])
  const [selected, setSelected] = useState<LandingPageRecord>()
  const changed = (page: LandingPageRecord) => {
    setSelected(page)
    setRevision((value) => value + 1)
  }
  return (
    <>
      <Loaded state={list}>
        {(page) => page.items.length === 0 ? <p>No landing pages yet.</p> : (
          <table>
            <thead><tr><th>Name</th><th>Status</th><th>Address</th><th>Updated</th></tr></thead>
            <tbody>
              {page.items.map((item) => (
                <tr>
                  <td><button type="button" class="secondary" onClick={() => setSelected(item)}>{item.name}</button></td>
                  <td>{item.status}</td><td>{item.url ?? `/${item.slug} (not published)`}</td><td>{date(item.updated_date)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Loaded>
      {selected !== undefined && <PageDetail key={`${selected.id}-${selected.status}`} credentials={props.credentials} page={selected} onChanged={changed} />}
    </>
  )
}
