import { type Caller, type Credentials, get, type Organization, type Page, type Summary, type UsageEvent } from "../api.ts"
import { type Series, TimeChart } from "../Chart.tsx"
import { Loaded, Section, useLoad } from "../ui.tsx"

const day = 86_400_000
const days = 30
/** Events read for the charts at most (pages of 100): enough for a month of a busy company's view. */
const maxPages = 20

/** The last `days` days' usage events of the organization, newest first, for the charts. */
const recentEvents = async (credentials: Credentials, organizationId: string, since: Date) => {
  const events: Array<UsageEvent> = []
  for (let page = 1; page <= maxPages; page++) {
    const answer = await get<Page<UsageEvent>>(
      credentials,
      `/organizations/${organizationId}/usage/history?startDate=${since.toISOString()}&pageSize=100&page=${page}`
    )
    events.push(...answer.items)
    if (!answer.hasNext) break
  }
  return events
}

/** Credits per day in total and per value of `by` (model or feature), one point a day. */
const perDay = (events: ReadonlyArray<UsageEvent>, since: number, by?: (event: UsageEvent) => string) => {
  const x = Array.from({ length: days + 1 }, (_, index) => (since + index * day) / 1000)
  const groups = new Map<string, Array<number>>()
  for (const event of events) {
    const label = by === undefined ? "credits" : by(event)
    const values = groups.get(label) ?? Array.from({ length: x.length }, () => 0)
    const index = Math.floor((Date.parse(event.createdDate) - since) / day)
    if (index >= 0 && index < values.length) values[index] = (values[index] ?? 0) + event.credits
    groups.set(label, values)
  }
  const series: Array<Series> = [...groups].map(([label, values]) => ({ label, values }))
  return { x, series }
}

const load = async (credentials: Credentials) => {
  const me = await get<Caller>(credentials, "/me")
  const { organizations } = await get<{ organizations: ReadonlyArray<Organization> }>(credentials, "/organizations")
  const organization = organizations.find((entry) => entry.id === me.organizationId)
  const today = new Date()
  const since = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - days * day
  const [summary, events] = await Promise.all([
    get<Summary>(credentials, `/organizations/${me.organizationId}/usage/history/summary?startDate=${new Date(since).toISOString()}`),
    recentEvents(credentials, me.organizationId, new Date(since))
  ])
  return { organization, summary, events, since }
}

/** Credits of the organization: its balance, totals and charts per day, by model and by feature; its data credits. */
export const Usage = (props: { credentials: Credentials }) => {
  const usage = useLoad(() => load(props.credentials), [props.credentials])
  return (
    <Loaded state={usage}>
      {({ organization, summary, events, since }) => (
        <>
          <Section title="Credits">
            <div class="metrics">
              <div><strong>{organization?.creditUsage ?? "—"}</strong>credits used</div>
              <div><strong>{organization?.creditLimit ?? "—"}</strong>credit limit</div>
              <div><strong data-testid="credits-30-days">{summary.totals.credits}</strong>credits in {days} days</div>
              <div><strong>{summary.totals.requests}</strong>billable calls in {days} days</div>
            </div>
          </Section>
          <Section title="Data credits">
            <div class="metrics">
              <div><strong data-testid="data-credits-used">{organization?.dataCreditUsage ?? "—"}</strong>data credits used</div>
              <div><strong data-testid="data-credit-limit">{organization?.dataCreditLimit ?? "—"}</strong>data credit limit</div>
            </div>
            <p>Data credits pay for job listing searches (one a search); model calls use credits.</p>
          </Section>
          <TimeChart unit="credits" title="Credits per day" {...perDay(events, since)} />
          <TimeChart unit="credits" title="Credits per day by model" {...perDay(events, since, (event) => event.model === "" ? "no model" : event.model)} />
          <TimeChart unit="credits" title="Credits per day by feature" {...perDay(events, since, (event) => event.feature)} />
          <Section title={`By model and feature, last ${days} days`}>
            <table>
              <thead><tr><th>Model</th><th>Feature</th><th>Calls</th><th>Tokens</th><th>Credits</th></tr></thead>
              <tbody>
                {summary.byModel.map((row) => (
                  <tr><td>{row.model}</td><td>{row.feature}</td><td>{row.requests}</td><td>{row.tokens}</td><td>{row.credits}</td></tr>
                ))}
              </tbody>
            </table>
          </Section>
        </>
      )}
    </Loaded>
  )
}
